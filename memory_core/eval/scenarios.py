"""The scenario suite: small scripted worlds driven through the tool surface, judged from the logs.

A scenario is a JSON file under ``seed_data/scenarios/<category>/``: a start time, grants, and a
list of steps (sessions, transcript turns, tool calls, clock moves, record checks). Each tool call
may carry an ``expect`` object. The harness runs the steps against a fresh store and judges every
expectation from what the store recorded — the write log, the search log and the records table —
rather than from the tool's reply alone, because the design makes the log the evaluation's input
(anything the log cannot show is a logging bug). ``docs/evaluation.md`` documents the format.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import FixedClock
from ..resources import seed_root
from .gate_calibration import GateFeatures, features_from_gate
from .judge import Check, StepContext, judge_record, judge_search, judge_write

CATEGORIES = (
    "desired_write", "prohibited_write", "desired_retrieval", "prohibited_retrieval", "stale_record",
    "conflicting_records", "entity_ambiguity", "cross_scope_boundary", "search_vs_no_search",
)
_REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Scenario:
    """One small world and its expected outcomes, as loaded from JSON."""

    id: str
    category: str
    title: str
    start: str
    grants: list[dict]
    steps: list[dict]
    path: Path | None = None

    @classmethod
    def from_dict(cls, data: dict, path: Path | None = None) -> "Scenario":
        unknown = set(data) - {"id", "category", "title", "start", "grants", "steps", "notes"}
        for number, step in enumerate(data.get("steps", []), start=1):
            extra = set(step) - {"session", "turn", "advance", "grant", "revoke", "record", "tool", "save", "expect", "known_gap", "guard"}
            if extra:
                raise ValueError(f"{path}: step {number} has unknown keys {sorted(extra)}")
        if unknown:
            raise ValueError(f"{path}: unknown scenario keys {sorted(unknown)}")
        if data["category"] not in CATEGORIES:
            raise ValueError(f"{path}: unknown category {data['category']!r}")
        return cls(data["id"], data["category"], data["title"], data.get("start", "2026-03-02T09:00:00Z"),
                   list(data.get("grants", [])), list(data["steps"]), path)


@dataclass
class ScenarioResult:
    scenario: Scenario
    checks: list[Check] = field(default_factory=list)
    error: str | None = None
    gate_samples: list = field(default_factory=list)  # GateFeatures of searches whose answer the gate decides

    @property
    def passed(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks if c.known_gap is None)

    def failures(self) -> list[Check]:
        """Failed checks that count (known gaps excluded)."""
        return [c for c in self.checks if not c.ok and c.known_gap is None]

    def known_gaps(self) -> list[Check]:
        """Checks on documented limitations, whether they currently fail or (newly) pass."""
        return [c for c in self.checks if c.known_gap is not None]


def default_directory() -> Path:
    return seed_root() / "scenarios"


def load_scenarios(directory: str | Path | None = None) -> list[Scenario]:
    """Every ``*.json`` scenario under ``directory`` (default ``seed_data/scenarios``), sorted by path."""
    root = Path(directory) if directory else default_directory()
    return [Scenario.from_dict(json.loads(p.read_text(encoding="utf-8")), p) for p in sorted(root.rglob("*.json"))]


def _resolve(value: Any, refs: dict[str, str]) -> Any:
    """Replace ``$name`` references (record ids saved by earlier steps) inside strings, lists and dicts."""
    if isinstance(value, str):
        def sub(match: re.Match) -> str:
            if match.group(1) not in refs:
                raise KeyError(f"unknown reference ${match.group(1)}")
            return refs[match.group(1)]
        return _REF.sub(sub, value)
    if isinstance(value, list):
        return [_resolve(v, refs) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, refs) for k, v in value.items()}
    return value


class ScenarioRunner:
    """Runs scenarios against fresh stores that share one loaded embedder."""

    def __init__(self, workdir: str | Path, *, embedder=None, settings=None) -> None:
        from ..settings import load_settings

        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.settings = settings or load_settings(extraction={"extract_on_session_end": False})
        self.embedder = embedder

    def run(self, scenario: Scenario) -> ScenarioResult:
        """Run one scenario in its own store; a crash becomes the result's ``error``."""
        from ..service import MemoryService

        result = ScenarioResult(scenario)
        clock = FixedClock(scenario.start)
        path = self.workdir / f"{scenario.id}.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        service = MemoryService.open(path, self.settings, clock=clock, embedder=self.embedder, llm=None)
        try:
            for grant in scenario.grants:
                service.grant(grant["agent"], grant["scope"], read=grant.get("read", True), write=grant.get("write", False),
                              actor="scenario")
            self._steps(service, clock, scenario, result)
        except Exception as exc:  # a broken scenario is a failed scenario, reported with its cause
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            service.close()
        return result

    def _steps(self, service, clock: FixedClock, scenario: Scenario, result: ScenarioResult) -> None:
        sessions: dict[str, Any] = {}
        refs: dict[str, str] = {}
        for number, raw in enumerate(scenario.steps, start=1):
            step = _resolve({k: v for k, v in raw.items() if k not in ("save", "known_gap")}, refs)
            if "session" in step:
                spec = step["session"]
                sessions[spec["name"]] = service.start_session(
                    agent_id=spec["agent"], user_id=spec["user"], project_id=spec.get("project"))
            elif "turn" in step:
                spec = step["turn"]
                sessions[spec["session"]].record_turn(spec["role"], spec["content"])
            elif "advance" in step:
                clock.advance(**step["advance"])
            elif "grant" in step:
                spec = step["grant"]
                service.grant(spec["agent"], spec["scope"], read=spec.get("read", True), write=spec.get("write", False), actor="scenario")
            elif "revoke" in step:
                service.revoke(step["revoke"]["agent"], step["revoke"]["scope"], actor="scenario")
            elif "record" in step:
                result.checks.extend(judge_record(service, number, step["record"]))
            elif "tool" in step:
                self._tool(service, sessions, refs, number, raw, step, result)
            else:
                raise ValueError(f"step {number}: unknown step {sorted(step)}")

    def _tool(self, service, sessions, refs, number, raw, step, result) -> None:
        spec = step["tool"]
        expect = step.get("expect", {})
        ctx = StepContext.before(service, number)
        reply = sessions[spec["session"]].call_tool(spec["name"], spec.get("args", {}), origin="eval")
        ctx.after(service, reply)
        checks = judge_search(ctx, expect) if spec["name"] == "memory_search" else judge_write(ctx, expect)
        if spec["name"] == "memory_search" and raw.get("guard", True):
            sample = gate_sample(f"{result.scenario.id}#{number}", ctx, expect)
            if sample is not None:
                result.gate_samples.append(sample)
        if raw.get("known_gap"):
            for check in checks:
                check.known_gap = raw["known_gap"]
        result.checks.extend(checks)
        if "save" in raw:
            record_id = ctx.saved_record_id()
            if record_id is None:
                raise ValueError(f"step {number}: nothing to save as ${raw['save']} (reply: {reply})")
            refs[raw["save"]] = record_id


def gate_sample(qid: str, ctx, expect: dict):
    """The gate's inputs for a search whose expected answer the gate decides, labelled by the
    expectation (``top``/``includes`` = should pass, ``empty`` = should not); None otherwise
    (e.g. no readable scope, where the hard filter decides before the gate)."""
    if len(ctx.searches) != 1:
        return None
    if any(k in expect for k in ("top", "includes")):
        label = True
    elif expect.get("empty") is True:
        label = False
    else:
        return None
    gate = next((st for st in ctx.searches[0].trace.get("stages", []) if st.get("name") == "gate"), None)
    outputs = (gate or {}).get("outputs") or {}
    if gate is None or gate.get("status") != "ran" or (outputs.get("best_cosine") is None and outputs.get("best_lexical") is None
                                                        and not outputs.get("entity_matches")):
        return None
    return features_from_gate(qid, label, outputs, "scenarios")


def summary_rows(results: list[ScenarioResult]) -> list[dict]:
    """One row per category: scenarios and checks passed."""
    rows = []
    for category in CATEGORIES:
        mine = [r for r in results if r.scenario.category == category]
        checks = [c for r in mine for c in r.checks if c.known_gap is None]
        gaps = [c for r in mine for c in r.known_gaps()]
        rows.append({
            "category": category, "scenarios": len(mine), "passed": sum(r.passed for r in mine),
            "checks": len(checks), "checks_passed": sum(c.ok for c in checks),
            "known_gaps": len(gaps), "known_gaps_failing": sum(not c.ok for c in gaps),
            "result": "PASS" if mine and all(r.passed for r in mine) else ("—" if not mine else "FAIL"),
        })
    return rows


def format_table(results: list[ScenarioResult]) -> str:
    """The pass/fail table per category, followed by every failed check."""
    rows = summary_rows(results)
    lines = [f"{'category':<22} {'scenarios':>9} {'checks':>11} {'known gaps':>10}  result", "-" * 66]
    for row in rows:
        gaps = f"{row['known_gaps_failing']}/{row['known_gaps']}" if row["known_gaps"] else "-"
        lines.append(f"{row['category']:<22} {row['passed']:>4}/{row['scenarios']:<4} {row['checks_passed']:>5}/{row['checks']:<5} "
                     f"{gaps:>10}  {row['result']}")
    for r in results:
        if r.error:
            lines.append(f"  {r.scenario.id}: ERROR {r.error}")
        for c in r.failures():
            lines.append(f"  {r.scenario.id} step {c.step}: {c.what} — {c.detail}")
        by_step: dict[int, list[Check]] = {}
        for c in r.known_gaps():
            by_step.setdefault(c.step, []).append(c)
        for step, checks in by_step.items():
            failing = [c for c in checks if not c.ok]
            state = "still failing: " + "; ".join(f"{c.what} ({c.detail})" for c in failing) if failing else \
                "NOW PASSES, promote it to a normal expectation"
            lines.append(f"  known gap at {r.scenario.id} step {step} ({checks[0].known_gap}): {state}")
    return "\n".join(lines)


def scenario_json(results: list[ScenarioResult]) -> list[dict]:
    """Results as JSON-able dicts (for benchmarks/out)."""
    return [{"id": r.scenario.id, "category": r.scenario.category, "passed": r.passed, "error": r.error,
             "checks": [dict(c.__dict__) for c in r.checks]} for r in results]


__all__ = ["CATEGORIES", "Check", "Scenario", "ScenarioResult", "ScenarioRunner", "format_table", "load_scenarios",
           "scenario_guards", "scenario_json", "summary_rows"]


def scenario_guards(workdir, *, settings=None, embedder=None) -> tuple[list[GateFeatures], list]:
    """Run the scenario suite and return its gate samples (and the results, for the table)."""
    runner = ScenarioRunner(workdir, embedder=embedder, settings=settings)
    results = [runner.run(s) for s in load_scenarios()]
    return [g for r in results for g in r.gate_samples], results
