"""Build the demo store from ``seed_data/`` through the real write paths, with a pinned clock.

:func:`build_demo_store` opens a fresh store with :class:`~memory_core.service.MemoryService`,
applies the world's grants, replays every session turn by turn (``record_turn`` with the turn's
time, tool calls through ``session.call_tool`` exactly as an agent would make them), ends each
session, runs extraction and the maintenance passes as the story goes, runs the logged searches,
and leaves the clock at the world's ``demo_now``. Nothing is inserted behind the service's back:
if a tool call the story expects to succeed fails, or a write is downgraded, the build stops.

The build is deterministic in content (ids are random, so they differ between builds): the same
seed gives the same records, statuses, times, flags and search outcomes. It always runs offline
(offline entailment judge, extractor and reviewer; no rewrite or reranker), whatever the settings
say, so a configured API key cannot change the demo.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from .clock import FixedClock, format_ts, parse_ts
from .demo_host import ScriptedHost
from .demo_seed import HANDLE_PREFIX, REFERENCE_FIELDS, Seed, SeedError, SessionSpec, StepSpec, load_seed
from .errors import MemoryCoreError
from .hostmem import run_fitness
from .service import MemoryService
from .settings import Settings, load_settings

TURN_GAP = timedelta(seconds=40)  # time between steps that give no `at` of their own
TOOL_GAP = timedelta(seconds=5)
SESSION_TAIL = timedelta(minutes=2)  # a session ends this long after its last step
WORKER_ID = "demo-builder"  # fixed, so extraction claims are the same in every build
LOST_WORKER_ID = "demo-worker-oom"  # the worker that keeps dying mid-attempt (a session's failed run)

# store_meta keys the admin app and the tests read (see read_demo_meta).
META_NOW = "demo_now"
META_DIGEST = "demo_seed_digest"
META_HANDLES = "demo_handles"
META_WORLD = "demo_world"
META_SEARCHES = "demo_searches"

Progress = Callable[[str], None]


class DemoBuildError(MemoryCoreError):
    """The demo store could not be built as the seed data describes."""

    code = "demo_build_failed"


def demo_settings(settings: Settings | None = None) -> Settings:
    """``settings`` with every hosted or non-deterministic feature switched off for the demo."""
    base = settings or load_settings()

    def section(name: str, **changes: Any) -> Any:
        current = getattr(base, name)
        known = {k: v for k, v in changes.items() if k in type(current).model_fields}
        return current.model_copy(update=known)

    return base.model_copy(update={
        "write": section("write", entailment_judge="offline"),
        "extraction": section("extraction", extractor="offline", reviewer="offline", extract_on_session_end=True),
        "retrieval": section("retrieval", rewrite_enabled=False, reranker_enabled=False),
        # host-issued memory for the hybrid adapter session, with the offline decider (qualified by a
        # fitness run the builder records before that session)
        "host_memory": section("host_memory", enabled=True, decider="offline"),
        "anthropic": section("anthropic", api_key=None),
    })


def build_demo_store(
    path: str | Path,
    force: bool = False,
    progress: Progress | None = None,
    settings: Settings | None = None,
    embedder=None,
    seed_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Build the demo store at ``path`` and return a summary of what it holds.

    Refuses an existing file unless ``force``. The store is built beside ``path`` and moved into
    place only when complete, so a failed build never leaves a half-built demo behind.
    ``progress`` receives one short message per step. ``embedder`` defaults to the configured
    (packaged) model.
    """
    from .store.urls import file_path

    path = file_path(path, what="the demo store file to build")
    if path.exists() and not force:
        raise DemoBuildError(f"{path} already exists; pass --force (force=True) to replace it", path=str(path))
    report = progress or (lambda message: None)
    started = time.perf_counter()
    seed = load_seed(seed_dir)
    building = path.with_name(path.name + ".building")
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_store_files(building)
    report(f"loading the embedding model and creating the store ({len(seed.sessions)} sessions to replay)")
    clock = FixedClock(seed.world.start)
    service = MemoryService.open(building, demo_settings(settings), clock=clock, embedder=embedder)
    try:
        with _one_torch_thread():
            summary = DemoBuilder(service, clock, seed, report).run()
    except BaseException:
        service.close()
        _remove_store_files(building)
        raise
    service.close()
    _remove_store_files(path)
    os.replace(building, path)
    summary["path"] = str(path)
    summary["elapsed_s"] = round(time.perf_counter() - started, 2)
    report(f"demo store ready at {path} ({summary['records']['total']} records, demo now {summary['demo_now']}, "
           f"{summary['elapsed_s']} s)")
    return summary


def read_demo_meta(service: MemoryService) -> dict[str, Any] | None:
    """The demo facts a built store carries (demo_now, handles, roster, searches), or None."""
    now = service.store.get_meta(META_NOW)
    if now is None:
        return None
    return {
        "demo_now": now,
        "seed_digest": service.store.get_meta(META_DIGEST),
        "handles": json.loads(service.store.get_meta(META_HANDLES) or "{}"),
        "world": json.loads(service.store.get_meta(META_WORLD) or "{}"),
        "searches": json.loads(service.store.get_meta(META_SEARCHES) or "{}"),
    }


@contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Embed with one torch thread while building, then restore the process's setting.

    Every write and search embeds one short sentence, which gains nothing from intra-op
    parallelism; on this 2-core machine shared with other work, one thread took 0.04 s per
    sentence against 0.57 s for two threads competing with the other processes for the cores.
    """
    torch = sys.modules.get("torch")  # only when a torch-based embedder is loaded
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _remove_store_files(path: Path) -> None:
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if candidate.exists():
            candidate.unlink()


class DemoBuilder:
    """Replays a seed into an open service. Use :func:`build_demo_store` unless you need the
    service afterwards (tests may build into a store they keep open)."""

    def __init__(self, service: MemoryService, clock: FixedClock, seed: Seed, report: Progress | None = None) -> None:
        self.service = service
        self.clock = clock
        self.seed = seed
        self.report = report or (lambda message: None)
        self.handles: dict[str, str] = {}
        self.steps: dict[str, str] = {}
        self.warnings: list[str] = []
        self.counts = {"turns": 0, "tool_calls": 0, "extraction_runs": 0, "maintenance_passes": 0, "adapter_sessions": 0,
                       "failed_extraction_runs": 0}
        self.searches: list[dict[str, Any]] = []
        self.in_session_searches: list[dict[str, Any]] = []

    # -- the whole story ----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Grants, sessions, searches, the final maintenance pass and the demo metadata."""
        world = self.seed.world
        self.clock.set(world.start)
        for grant in world.grants:
            self.service.grant(grant.agent, grant.scope, read=grant.read, write=grant.write,
                               actor="demo-seed", reason=grant.reason)
        self.steps["grants"] = f"applied {len(world.grants)} grants"
        total = len(self.seed.sessions)
        for number, spec in enumerate(self.seed.sessions, 1):
            self.report(f"session {number}/{total}: {spec.title} ({spec.start:%Y-%m-%d}, {spec.agent} with {spec.user})")
            self._replay(spec)
        self.report(f"running {len(self.seed.searches)} logged searches")
        for spec in self.seed.searches:
            self._search(spec)
        self.clock.set(world.demo_now)
        self.report(f"final maintenance pass at demo now ({world.demo_now})")
        self._maintenance()
        self._write_meta()
        return self._summary()

    # -- sessions -----------------------------------------------------------------------------

    def _replay(self, spec: SessionSpec) -> None:
        at = spec.start
        self.clock.set(at)
        host = None
        if spec.adapter is not None:
            self._qualify_host_memory(spec)
            host = ScriptedHost(self.service, spec)
            self.counts["adapter_sessions"] += 1
        else:
            session = self.service.start_session(agent_id=spec.agent, user_id=spec.user, session_id=spec.id,
                                                 project_id=spec.project, write_targets=spec.write_targets or None)
        call = host.call_tool if host is not None else session.call_tool
        for index, step in enumerate(spec.steps):
            if step.at is not None:
                explicit = parse_ts(step.at)
                if explicit < at:
                    raise SeedError(f"session {spec.id} step {index}: `at` {step.at} goes back in time")
                at = explicit
            elif index:
                at = at + (TURN_GAP if step.is_turn else TOOL_GAP)
            self.clock.set(at)
            if step.is_turn:
                if host is None:
                    session.record_turn(step.role, step.text, at=at)
                elif step.role == "user":
                    host.user(step.text)
                else:
                    host.turn(step.role, step.text)
                self.counts["turns"] += 1
            else:
                self._tool(call, spec, index, step)
        self.clock.set(at + SESSION_TAIL)
        run_id = host.end() if host is not None else session.end()
        if run_id and spec.extraction == "worker_lost":
            self._lose_worker(run_id, spec)
        elif run_id:
            self._extract(run_id, spec)
        self._maintenance()

    def _qualify_host_memory(self, spec: SessionSpec) -> None:
        """Before the first hybrid session: the fitness run host-issued memory needs (docs/host-memory.md),
        recorded in the store like ``agent-memory fitness run`` does; a failing result stops the build."""
        if spec.adapter is None or spec.adapter.trigger_mode != "hybrid" or self.steps.get("fitness"):
            return
        result = run_fitness(self.service, actor="demo-seed")
        if not result.passed:
            raise DemoBuildError(f"the host-memory fitness run failed: {'; '.join(result.failures)}", step="fitness")
        self.steps["fitness"] = "a passing host-memory fitness run before the first hybrid session"

    def _lose_worker(self, run_id: str, spec: SessionSpec) -> None:
        """A worker claims the run and dies mid-attempt, every time, until its attempts are spent: each
        claim's lease runs out, and the next claim finds the run exhausted and marks it failed."""
        runner = self.service.extraction
        lease = timedelta(seconds=self.service.settings.extraction.claim_timeout_s)
        for _ in range(self.service.settings.extraction.max_attempts):
            if runner.claim(LOST_WORKER_ID, run_id) is None:
                raise DemoBuildError(f"session {spec.id}: extraction run {run_id} could not be claimed", step=spec.id)
            self.clock.set(self.clock.now() + lease + TOOL_GAP)
        if runner.claim(LOST_WORKER_ID, run_id) is not None:
            raise DemoBuildError(f"session {spec.id}: extraction run {run_id} was still claimable", step=spec.id)
        status = self.service.extraction_run(run_id).status
        if status != "failed":
            raise DemoBuildError(f"session {spec.id}: the abandoned extraction run is {status}, not failed", step=spec.id)
        self.counts["failed_extraction_runs"] += 1
        self.steps["failed_extraction"] = f"run {run_id} of {spec.id} abandoned by a dying worker"

    def _tool(self, call: Callable[[str, dict], dict[str, Any]], spec: SessionSpec, index: int, step: StepSpec) -> None:
        where = f"session {spec.id} step {index} ({step.tool})"
        args = {k: self._resolve(v) if k in REFERENCE_FIELDS else v for k, v in step.args.items()}
        result = call(step.tool, args)
        self.counts["tool_calls"] += 1
        if not result.get("ok"):
            error = result.get("error", {})
            raise DemoBuildError(f"{where} failed: [{error.get('code')}] {error.get('message')}", step=where)
        if step.tool in ("memory_write", "memory_revise") and result.get("downgraded"):
            raise DemoBuildError(f"{where}: the write was downgraded to agent_inference: {result.get('downgrade_reason')}",
                                 step=where)
        if step.tool == "memory_search":
            found = [item.get("id") or item.get("record_id") for item in result.get("results", [])]
            self.in_session_searches.append({"session": spec.id, "query": args.get("query"), "results": found})
            missing = [h for h in step.expect.get("results", []) if self.handles[h] not in found]
            if missing:
                self.warnings.append(f"{where}: expected {missing} among the results")
            return
        self._check(where, step, result)
        if step.save_as:
            self.handles[step.save_as] = result["record_id"]

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith(HANDLE_PREFIX):
            return self.handles[value[len(HANDLE_PREFIX):]]
        return value

    def _check(self, where: str, step: StepSpec, result: dict[str, Any]) -> None:
        """Compare a tool result with the step's ``expect`` table; any difference stops the build."""
        problems = []
        for key, wanted in step.expect.items():
            if key in ("status", "source_kind", "outcome"):
                if result.get(key) != wanted:
                    problems.append(f"{key} is {result.get(key)!r}, expected {wanted!r}")
            elif key == "version":
                version = self.service.record(result["record_id"]).version
                if version != wanted:
                    problems.append(f"version is {version}, expected {wanted}")
            elif key == "supersedes":
                if self.handles[wanted] not in result.get("superseded", []):
                    problems.append(f"did not supersede {wanted}")
            elif key in ("conflicts_with", "forgotten"):
                got = result.get(key, [])
                missing = [h for h in wanted if self.handles[h] not in got]
                if missing:
                    problems.append(f"{key} lacks {missing}")
        if problems:
            raise DemoBuildError(f"{where}: {'; '.join(problems)} (result: {result})", step=where)

    # -- extraction and maintenance after each session --------------------------------------------

    def _extract(self, run_id: str, spec: SessionSpec) -> None:
        detail = self.service.run_extraction(run_id, worker_id=WORKER_ID)
        self.counts["extraction_runs"] += 1
        self.steps["extraction"] = "ran after every session"
        if detail.status != "succeeded":
            self.warnings.append(f"extraction run for {spec.id} ended {detail.status}: {detail.run.get('error')}")

    def _maintenance(self) -> None:
        self.service.run_maintenance()
        self.counts["maintenance_passes"] += 1
        self.steps["maintenance"] = "ran after every session and at demo now"

    # -- searches -----------------------------------------------------------------------------

    def _search(self, spec) -> None:
        self.clock.set(spec.at)
        response = self.service.search(agent_id=spec.agent, user_id=spec.user, query=spec.query)
        self.steps["searches"] = f"ran {len(self.seed.searches)} searches"
        found = list(response.record_ids)
        entry = {"label": spec.label, "agent": spec.agent, "user": spec.user, "query": spec.query, "at": spec.at,
                 "search_id": response.search_id, "results": found, "empty": not found,
                 "empty_reason": response.empty_reason, "expected": spec.expect}
        self.searches.append(entry)
        if spec.expect == "empty" and found:
            self.warnings.append(f"search {spec.label}: expected an empty result, got {len(found)} records")
        missing = [h for h in spec.results if self.handles.get(h) not in found]
        if spec.expect == "results" and missing:
            self.warnings.append(f"search {spec.label}: expected {missing} among the results")

    # -- the record of the build ----------------------------------------------------------------

    def _write_meta(self) -> None:
        world = self.seed.world
        roster = {
            "name": world.name, "org": world.org.model_dump(), "projects": [p.model_dump() for p in world.projects],
            "users": [u.model_dump() for u in world.users], "agents": [a.model_dump() for a in world.agents],
            "grant_gaps": [g.model_dump() for g in world.grant_gaps],
        }
        searches = {s["label"]: s["search_id"] for s in self.searches}
        for key, value in ((META_NOW, format_ts(parse_ts(world.demo_now))), (META_DIGEST, self.seed.digest),
                           (META_HANDLES, json.dumps(self.handles, sort_keys=True)), (META_WORLD, json.dumps(roster)),
                           (META_SEARCHES, json.dumps(searches, sort_keys=True))):
            self.service.store.set_meta(key, value)

    def _summary(self) -> dict[str, Any]:
        stats = self.service.stats()
        return {
            "demo_now": format_ts(parse_ts(self.seed.world.demo_now)),
            "seed_digest": self.seed.digest,
            "sessions": len(self.seed.sessions),
            **self.counts,
            "records": {"total": stats["records"], "by_status": stats["by_status"], "by_type": stats["by_type"],
                        "by_scope_kind": stats["by_scope_kind"], "by_source_kind": stats["by_source_kind"]},
            "entities": stats["entities"],
            "grants": stats["grants"],
            "review_due": stats["review_due"],
            "handles": dict(self.handles),
            "searches": self.searches,
            "in_session_searches": self.in_session_searches,
            "steps": dict(self.steps),
            "warnings": list(self.warnings),
        }
