"""The fitness bundle: a versioned, scripted world plus blind splits of user turns.

The bundle lives in ``seed_data/host_memory_fitness/bundle.json`` (docs/host-memory.md describes the
format). Its ``version`` names exactly this content: change a record, a case or a threshold and the
version must change, because a recorded fitness result is valid only for the version it ran.
:func:`build_world` writes the bundle's records into a fresh store through the normal write path.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import parse_ts
from ..errors import InvalidInputError
from ..ingest.writer import WriteRequest
from ..policy.grants import ScopeAccess
from ..policy.scopes import parse_scope
from ..resources import seed_root

if TYPE_CHECKING:
    from ..service import MemoryService

CASE_KINDS = ("ordinary", "conditional", "safety")
THRESHOLD_KEYS = ("max_ordinary_injection_rate", "min_conditional_recall", "max_safety_violations")


def default_bundle_path() -> Path:
    return seed_root() / "host_memory_fitness" / "bundle.json"


@dataclass(frozen=True)
class Case:
    """One user turn and what host-issued memory must do with it."""

    id: str
    kind: str  # ordinary: nothing admitted; conditional: the expected records admitted; safety: forbidden ones never
    user: str
    turn: str
    project: str | None = None
    expect: tuple[str, ...] = ()  # record keys that must be admitted (conditional)
    forbid: tuple[str, ...] = ()  # record keys that must never be admitted (safety)


@dataclass(frozen=True)
class Bundle:
    version: str
    agent: str
    start: str
    run_after_days: float
    thresholds: dict[str, float]
    grants: list[dict[str, Any]]
    records: list[dict[str, Any]]
    splits: dict[str, list[Case]]
    report_split: str
    digest: str

    def cases(self, split: str) -> list[Case]:
        if split not in self.splits:
            raise InvalidInputError(f"the bundle has no split {split!r}; it has {', '.join(self.splits)}", field="split")
        return self.splits[split]


def load_bundle(path: str | Path | None = None) -> Bundle:
    """Read and validate a bundle file (InvalidInputError naming what is wrong)."""
    from ..store.urls import file_path

    path = file_path(path, field="bundle", what="a fitness bundle file") if path is not None else default_bundle_path()
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read the fitness bundle {path}: {exc}", field="bundle") from exc
    for key in ("version", "agent", "start", "thresholds", "grants", "records", "splits", "report_split"):
        if key not in data:
            raise InvalidInputError(f"the fitness bundle {path} lacks {key!r}", field="bundle")
    if set(data["thresholds"]) != set(THRESHOLD_KEYS):
        raise InvalidInputError(f"bundle thresholds must be exactly {', '.join(THRESHOLD_KEYS)}", field="thresholds")
    keys = {r["key"] for r in data["records"]}
    splits: dict[str, list[Case]] = {}
    for name, cases in data["splits"].items():
        out = []
        for item in cases:
            case = Case(item["id"], item["kind"], item["user"], item["turn"], item.get("project"),
                        tuple(item.get("expect", ())), tuple(item.get("forbid", ())))
            if case.kind not in CASE_KINDS:
                raise InvalidInputError(f"case {case.id}: kind must be one of {', '.join(CASE_KINDS)}", field="kind")
            unknown = set(case.expect + case.forbid) - keys
            if unknown:
                raise InvalidInputError(f"case {case.id} names unknown records {sorted(unknown)}", field="records")
            if case.kind == "conditional" and not case.expect:
                raise InvalidInputError(f"conditional case {case.id} expects no record", field="expect")
            out.append(case)
        splits[name] = out
    if data["report_split"] not in splits or len(splits) < 2:
        raise InvalidInputError("a bundle needs at least two splits, one of them the report split", field="splits")
    return Bundle(data["version"], data["agent"], data["start"], float(data.get("run_after_days", 0)),
                  {k: float(v) for k, v in data["thresholds"].items()}, list(data["grants"]), list(data["records"]),
                  splits, data["report_split"], hashlib.sha256(raw).hexdigest()[:16])


def build_world(service: "MemoryService", bundle: Bundle) -> dict[str, str]:
    """Write the bundle's grants and records into ``service`` (a fresh store on a fixed clock), then
    move the clock ``run_after_days`` on and run maintenance (so provisional records expire).
    Returns record key -> record id (a superseded record keeps its own id)."""
    for grant in bundle.grants:
        service.grant(bundle.agent, grant["scope"], read=True, write=bool(grant.get("write")), actor="fitness")
    ids: dict[str, str] = {}
    for item in bundle.records:
        scope = parse_scope(item["scope"])
        if item.get("source", "system") == "system":
            outcome = service.write_system_fact(
                scope=scope.key, content=item["content"], attribute=item.get("attribute"), about=item.get("about"),
                about_kind=item.get("about_kind", "other"), actor="fitness",
                valid_until=parse_ts(item["valid_until"]) if item.get("valid_until") else None)
        else:  # an agent's inference: provisional, expires unless reinforced
            access = ScopeAccess(bundle.agent, scope.id, writable={scope.key: "fitness world"}, readable={scope.key: "fitness world"})
            outcome = service.write(WriteRequest(
                type="semantic", content=item["content"], scope=scope, source_kind="agent_inference", agent_id=bundle.agent,
                user_id=scope.id if scope.kind == "user" else "fitness", actor="fitness", attribute=item.get("attribute"),
                about=item.get("about"), operation="fitness_world"), access)
        record_id = getattr(outcome, "record_id", None) or getattr(getattr(outcome, "record", None), "id", None)
        if record_id is None:
            raise InvalidInputError(f"the fitness world's record {item['key']} was not written: {outcome}", field="records")
        ids[item["key"]] = record_id
    clock = service.clock
    if bundle.run_after_days and hasattr(clock, "advance"):
        clock.advance(days=bundle.run_after_days)
        service.run_maintenance(actor="fitness")
    return ids


def start_time(bundle: Bundle):
    return parse_ts(bundle.start)


def run_time(bundle: Bundle):
    return parse_ts(bundle.start) + timedelta(days=bundle.run_after_days)
