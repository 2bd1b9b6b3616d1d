"""The demo world's data files (``seed_data/``) as validated models.

``seed_data/world.toml`` holds the roster, grants and the two clock settings; each file in
``seed_data/sessions/`` is one dated conversation (turns and tool calls); ``seed_data/searches.toml``
lists the searches the builder logs. Every model forbids unknown keys so a typo in a seed file
fails the build instead of silently changing the story. The format is described in docs/demo.md.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .clock import parse_ts
from .errors import MemoryCoreError
from .resources import seed_root

SEED_DIR_ENV = "MEMORY_SEED_DIR"
HANDLE_PREFIX = "@"
# Tool arguments that may name an earlier record or entity by its handle ("@save_as name").
REFERENCE_FIELDS = ("record_id", "source_entity_id", "target_entity_id")


class SeedError(MemoryCoreError):
    """A seed data file is missing, malformed or inconsistent."""

    code = "seed_invalid"


class _Seed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OrgSpec(_Seed):
    id: str
    name: str
    description: str = ""


class ProjectSpec(_Seed):
    id: str
    name: str
    description: str = ""


class UserSpec(_Seed):
    id: str
    name: str
    role: str = ""


class AgentSpec(_Seed):
    id: str
    name: str
    description: str = ""


class GrantSpec(_Seed):
    agent: str
    scope: str
    read: bool = True
    write: bool = False
    reason: str


class GrantGapSpec(_Seed):
    """A grant deliberately absent from the built store (documented, and added by the e2e tests)."""

    label: str
    agent: str
    scope: str
    read: bool = True
    write: bool = False
    why_missing: str
    added_by: str = ""


class WorldSpec(_Seed):
    name: str
    start: str
    demo_now: str
    org: OrgSpec
    projects: list[ProjectSpec]
    users: list[UserSpec]
    agents: list[AgentSpec]
    grants: list[GrantSpec]
    grant_gaps: list[GrantGapSpec] = Field(default_factory=list)

    def gap(self, label: str) -> GrantGapSpec:
        for gap in self.grant_gaps:
            if gap.label == label:
                return gap
        raise SeedError(f"no grant gap labelled {label!r} in world.toml")


ExpectKey = Literal["status", "source_kind", "version", "outcome", "supersedes", "conflicts_with", "forgotten", "results"]


class StepSpec(_Seed):
    """One transcript turn (``role`` + ``text``) or one tool call (``tool`` + ``args``)."""

    at: str | None = None
    role: Literal["user", "assistant", "tool", "system"] | None = None
    text: str | None = None
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    save_as: str | None = None
    expect: dict[ExpectKey, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> "StepSpec":
        is_turn = self.role is not None or self.text is not None
        if is_turn == (self.tool is not None):
            raise ValueError("a step is either a turn (role + text) or a tool call (tool + args)")
        if is_turn and (self.role is None or not self.text):
            raise ValueError("a turn needs both role and text")
        if is_turn and (self.args or self.save_as or self.expect):
            raise ValueError("args, save_as and expect belong to tool calls")
        return self

    @property
    def is_turn(self) -> bool:
        return self.role is not None


class HostToolSpec(_Seed):
    """One of the host's own (non-memory) tools, as the scripted host offers it to the model."""

    name: str
    description: str = ""


class AdapterSpec(_Seed):
    """A session recorded through the adapter runtime (``memory_core.demo_host``), not plain service calls."""

    trigger_mode: Literal["tool_only", "auto", "hybrid"] = "tool_only"
    ambient: bool = False
    system: str = ""  # the host's own system text, before the memory-use policy and the profile
    host_tools: list[HostToolSpec] = Field(default_factory=list)


class SessionSpec(_Seed):
    id: str
    title: str
    agent: str
    user: str
    project: str | None = None
    write_targets: dict[str, str] = Field(default_factory=dict)
    adapter: AdapterSpec | None = None
    # "run": extraction runs after the session; "worker_lost": a worker claims it and dies each time
    # (its lease expires) until the attempts are spent, leaving the run failed.
    extraction: Literal["run", "worker_lost"] = "run"
    steps: list[StepSpec]

    @model_validator(mode="after")
    def _starts_with_a_time(self) -> "SessionSpec":
        if not self.steps or self.steps[0].at is None:
            raise ValueError("the first step of a session needs an `at` time")
        return self

    @property
    def start(self) -> datetime:
        return parse_ts(self.steps[0].at)  # type: ignore[return-value]


class SearchFixSpec(_Seed):
    """What turns an empty demo search into one that returns the record."""

    query: str | None = None
    grant: str | None = None  # a grant gap label
    historical: bool = False
    results: list[str]


class SearchSpec(_Seed):
    label: str
    agent: str
    user: str
    at: str
    query: str
    expect: Literal["results", "empty"]
    results: list[str] = Field(default_factory=list)
    empty_because: Literal["below_floors", "no_readable_scope", "all_superseded"] | None = None
    reason_mentions: list[str] = Field(default_factory=list)
    note: str = ""
    fix: SearchFixSpec | None = None


@dataclass
class Seed:
    """Everything in a seed directory, sessions in story order."""

    directory: Path
    world: WorldSpec
    sessions: list[SessionSpec]
    searches: list[SearchSpec]
    digest: str

    def handles(self) -> list[str]:
        """Every ``save_as`` name the sessions define, in story order."""
        return [step.save_as for s in self.sessions for step in s.steps if step.save_as]


def default_seed_dir() -> Path:
    """``$MEMORY_SEED_DIR``, else ``seed_data/`` (the checkout's, or the installed copy: :mod:`.resources`)."""
    env = os.environ.get(SEED_DIR_ENV)
    return Path(env) if env else seed_root()


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SeedError(f"seed file {path} is missing", path=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise SeedError(f"seed file {path} is not valid TOML: {exc}", path=str(path)) from exc


def _parse(model: type[_Seed], data: dict[str, Any], path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_url=False)[:5]
        )
        raise SeedError(f"{path.name}: {problems}", path=str(path)) from None


def load_seed(seed_dir: str | Path | None = None) -> Seed:
    """Read and check a seed directory: world, sessions (sorted by start time) and searches."""
    directory = Path(seed_dir) if seed_dir else default_seed_dir()
    files = [directory / "world.toml", *sorted((directory / "sessions").glob("*.toml")), directory / "searches.toml"]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        try:
            digest.update(path.read_bytes())
        except FileNotFoundError as exc:
            raise SeedError(f"seed file {path} is missing", path=str(path)) from exc
    world = _parse(WorldSpec, _read_toml(files[0]), files[0])
    sessions = [_parse(SessionSpec, _read_toml(p), p) for p in files[1:-1]]
    searches = [_parse(SearchSpec, s, files[-1]) for s in _read_toml(files[-1]).get("searches", [])]
    sessions.sort(key=lambda s: (s.start, s.id))
    seed = Seed(directory, world, sessions, searches, digest.hexdigest()[:16])
    _check_consistency(seed)
    return seed


def _check_consistency(seed: Seed) -> None:
    users = {u.id for u in seed.world.users}
    agents = {a.id for a in seed.world.agents}
    projects = {p.id for p in seed.world.projects}
    start, end = parse_ts(seed.world.start), parse_ts(seed.world.demo_now)
    if start >= end:
        raise SeedError("world.toml: start must be before demo_now")
    seen_ids: set[str] = set()
    handles: set[str] = set()
    for s in seed.sessions:
        where = f"session {s.id}"
        if s.id in seen_ids:
            raise SeedError(f"{where}: the id is used twice")
        seen_ids.add(s.id)
        if s.agent not in agents or s.user not in users or (s.project and s.project not in projects):
            raise SeedError(f"{where}: unknown agent, user or project")
        if not start <= s.start < end:
            raise SeedError(f"{where}: starts outside world.start .. demo_now")
        for step in s.steps:
            for key in REFERENCE_FIELDS:
                value = step.args.get(key)
                if isinstance(value, str) and value.startswith(HANDLE_PREFIX) and value[1:] not in handles:
                    raise SeedError(f"{where}: {key} refers to {value}, which no earlier step saved")
            for key in ("supersedes", "conflicts_with", "forgotten", "results"):
                named = step.expect.get(key, [])
                for handle in [named] if isinstance(named, str) else named:
                    if handle not in handles:
                        raise SeedError(f"{where}: expect.{key} names {handle!r}, which no earlier step saved")
            if step.save_as:
                if step.save_as in handles:
                    raise SeedError(f"{where}: handle {step.save_as!r} is saved twice")
                handles.add(step.save_as)
    for search in seed.searches:
        named = list(search.results) + (list(search.fix.results) if search.fix else [])
        unknown = [h for h in named if h not in handles]
        if unknown:
            raise SeedError(f"search {search.label}: unknown handles {unknown}")
        if search.fix and search.fix.grant:
            seed.world.gap(search.fix.grant)
        if search.expect == "empty" and search.empty_because is None:
            raise SeedError(f"search {search.label}: an empty search needs empty_because")
        if not start <= parse_ts(search.at) <= end:
            raise SeedError(f"search {search.label}: `at` is outside world.start .. demo_now")
