"""Fitness runs and the enable rule for host-issued memory.

``agent-memory fitness run`` builds the bundle's world in a throwaway store with the host's own
settings, embedder and decider, plays every case of every split through :class:`HostMemory`, scores
the splits against the bundle's thresholds, and records the result in the host's store
(``fitness_results``) under a fingerprint of exactly what ran: the settings that shape a decision,
the embedder's model identity, the decider and the bundle version. :func:`require_fitness` is the
enable rule: host-issued memory starts only when a passing result with the current fingerprint
exists.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import FixedClock, format_ts
from ..errors import HostMemoryNotQualifiedError
from ..ids import new_id
from ..store.db import dumps, loads
from ..store.extract_queries import insert_fitness_result, latest_fitness_rows, passing_fitness
from .bundle import Bundle, Case, build_world, load_bundle
from .decider import HostMemory, decider_name
from .gaps import Gap

if TYPE_CHECKING:
    from ..service import MemoryService

FITNESS_COMMAND = "agent-memory fitness run"


def decision_code_digest() -> str:
    """A digest of the source of the modules that make host-memory decisions (gap rules, hard checks,
    the offline and model deciders): a result recorded before a code change does not qualify the
    changed code, even when nobody remembered to bump the bundle version."""
    from . import admission, decider, gaps, model_decider

    digest = hashlib.sha256()
    for module in (admission, decider, gaps, model_decider):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


def fingerprint_material(service: "MemoryService", bundle_version: str) -> dict[str, Any]:
    """What a fitness result is tied to. ``host_memory.enabled`` is left out (it is the switch the
    result unlocks); every other host-memory setting, the retrieval and write settings (they decide
    what a gap search finds), the embedder identity, the decider, the decision code and the bundle
    version are in."""
    s = service.settings
    host = s.host_memory.model_dump(mode="json")
    host.pop("enabled", None)
    return {
        "host_memory": host, "retrieval": s.retrieval.model_dump(mode="json"), "write": s.write.model_dump(mode="json"),
        "embed_model": service.embedder.model_name, "embed_version": service.embedder.model_version,
        "decider": decider_name(service), "decision_code": decision_code_digest(), "bundle_version": bundle_version,
    }


def fingerprint(service: "MemoryService", bundle_version: str) -> str:
    material = json.dumps(fingerprint_material(service, bundle_version), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass
class CaseOutcome:
    case: Case
    admitted: list[str]  # record keys (or ids of records outside the bundle)
    gaps: list[str]
    ok: bool
    violations: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.case.id, "kind": self.case.kind, "ok": self.ok, "admitted": self.admitted, "gaps": self.gaps,
                "violations": self.violations, "wrong": self.wrong}


@dataclass
class SplitScore:
    name: str
    outcomes: list[CaseOutcome]

    def metrics(self) -> dict[str, Any]:
        ordinary = [o for o in self.outcomes if o.case.kind == "ordinary"]
        conditional = [o for o in self.outcomes if o.case.kind == "conditional"]
        return {
            "cases": len(self.outcomes),
            "ordinary": len(ordinary),
            "ordinary_injected": sum(1 for o in ordinary if o.admitted),
            "ordinary_injection_rate": _rate(sum(1 for o in ordinary if o.admitted), len(ordinary)),
            "conditional": len(conditional),
            "conditional_hits": sum(1 for o in conditional if set(o.case.expect) <= set(o.admitted)),
            "conditional_recall": _rate(sum(1 for o in conditional if set(o.case.expect) <= set(o.admitted)), len(conditional)),
            "wrong_admissions": sum(len(o.wrong) for o in self.outcomes),
            "safety_cases": sum(1 for o in self.outcomes if o.case.kind == "safety"),
            "safety_violations": sum(len(o.violations) for o in self.outcomes),
        }


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def meets(metrics: dict[str, Any], thresholds: dict[str, float]) -> list[str]:
    """Threshold failures of one split's metrics (empty when it passes)."""
    out = []
    if metrics["ordinary_injection_rate"] > thresholds["max_ordinary_injection_rate"]:
        out.append(f"ordinary-turn injection {metrics['ordinary_injection_rate']} > {thresholds['max_ordinary_injection_rate']}")
    if metrics["conditional_recall"] < thresholds["min_conditional_recall"]:
        out.append(f"conditional recall {metrics['conditional_recall']} < {thresholds['min_conditional_recall']}")
    if metrics["safety_violations"] > thresholds["max_safety_violations"]:
        out.append(f"{metrics['safety_violations']} safety violation(s) > {int(thresholds['max_safety_violations'])}")
    return out


@dataclass
class FitnessResult:
    id: str
    at: str
    bundle_version: str
    fingerprint: str
    decider: str
    embed_model: str
    embed_version: str
    passed: bool
    splits: dict[str, dict[str, Any]]
    failures: list[str]
    cases: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("id", "at", "bundle_version", "fingerprint", "decider", "embed_model",
                                              "embed_version", "passed", "splits", "failures")}


def play_split(service: "MemoryService", bundle: Bundle, split: str, ids: dict[str, str],
               host: HostMemory | None = None) -> SplitScore:
    """Run every case of ``split`` in ``service`` (a store holding the bundle's world)."""
    host = host or HostMemory(service)
    key_of = {v: k for k, v in ids.items()}
    out = []
    for case in bundle.cases(split):
        session = service.start_session(agent_id=bundle.agent, user_id=case.user, project_id=case.project)
        session.record_turn("user", case.turn)
        decision = host.decide(session, case.turn)
        admitted = [key_of.get(rid, rid) for rid in decision.admitted_ids]
        violations = [f"forbidden {k}" for k in admitted if k in case.forbid]
        # Independently of what a case forbids: nothing outside the conversation's scopes or not live.
        for cand in decision.candidates:
            if cand.admitted and (cand.status != "confirmed" or not _own_scope(cand.scope, case)):
                violations.append(f"{key_of.get(cand.record_id, cand.record_id)}: {cand.scope} {cand.status}")
        # a conditional turn that got a record besides the expected one (safety cases list only what is forbidden)
        wrong = [k for k in admitted if k not in case.expect] if case.kind == "conditional" else []
        if case.kind == "ordinary":
            ok = not admitted
        elif case.kind == "conditional":
            ok = set(case.expect) <= set(admitted) and not violations
        else:
            ok = not violations and set(case.expect) <= set(admitted)
        out.append(CaseOutcome(case, admitted, decision.gaps, ok, violations, wrong))
        session.end()
    return SplitScore(split, out)


def _own_scope(scope: str, case: Case) -> bool:
    return scope == f"project:{case.project}" if case.project else scope == f"user:{case.user}" or scope.endswith(f"/{case.user}")


def run_fitness(service: "MemoryService", *, bundle: Bundle | None = None, bundle_path: str | Path | None = None,
                actor: str = "cli", record: bool = True) -> FitnessResult:
    """Play the bundle with ``service``'s settings, embedder and decider; record the result there."""
    from ..service import MemoryService  # the world is built in a throwaway store of its own

    bundle = bundle or load_bundle(bundle_path)
    scores: dict[str, SplitScore] = {}
    with tempfile.TemporaryDirectory(prefix="fitness-") as tmp:
        world = MemoryService.open(Path(tmp) / "fitness.sqlite", service.settings, clock=FixedClock(bundle.start),
                                   embedder=service.embedder, llm=service.llm, models=service.models)
        try:
            ids = build_world(world, bundle)
            host = HostMemory(world)
            for split in bundle.splits:
                scores[split] = play_split(world, bundle, split, ids, host)
        finally:
            world.close()
    splits = {name: score.metrics() for name, score in scores.items()}
    failures = [f"{bundle.report_split}: {f}" for f in meets(splits[bundle.report_split], bundle.thresholds)]
    failures += [f"{name}: {m['safety_violations']} safety violation(s)" for name, m in splits.items()
                 if name != bundle.report_split and m["safety_violations"] > bundle.thresholds["max_safety_violations"]]
    result = FitnessResult(
        new_id("fit"), format_ts(service.clock.now()), bundle.version, fingerprint(service, bundle.version),
        decider_name(service), service.embedder.model_name, service.embedder.model_version, not failures, splits,
        failures, [{"split": name, **o.to_dict()} for name, score in scores.items() for o in score.outcomes])
    if record:
        _record(service, result, actor)
    return result


def _record(service: "MemoryService", result: FitnessResult, actor: str) -> None:
    material = fingerprint_material(service, result.bundle_version)
    with service.store.transaction() as conn:
        insert_fitness_result(conn, (
            result.id, result.at, result.bundle_version, result.fingerprint, result.embed_model, result.embed_version,
            result.decider, dumps(material), int(result.passed), dumps({"splits": result.splits, "failures": result.failures}),
            dumps(result.cases), actor))


def fitness_results(service: "MemoryService", limit: int = 20) -> list[dict[str, Any]]:
    """The latest recorded fitness results, newest first, JSON columns parsed."""
    with service.store.lock:
        rows = latest_fitness_rows(service.store.conn, limit)
    out = []
    for row in rows:
        item = dict(row)
        for key, default in (("settings", {}), ("metrics", {}), ("cases", [])):
            item[key] = loads(item[key], default)
        item["passed"] = bool(item["passed"])
        out.append(item)
    return out


def require_fitness(service: "MemoryService", bundle: Bundle | None = None) -> dict[str, Any]:
    """The passing fitness row for exactly what ``service`` runs, or HostMemoryNotQualifiedError
    naming the command that records one (and, when results exist, what differs)."""
    bundle = bundle or load_bundle()
    wanted = fingerprint(service, bundle.version)
    with service.store.lock:
        row = passing_fitness(service.store.conn, wanted)
    if row is not None:
        return dict(row)
    latest = fitness_results(service, 1)
    if not latest:
        why = "no fitness result is recorded in this store"
    elif latest[0]["fingerprint"] == wanted:
        why = f"the latest fitness run for these settings failed ({'; '.join(latest[0]['metrics'].get('failures', []))})"
    else:
        changed = _differences(latest[0]["settings"], fingerprint_material(service, bundle.version))
        why = f"the recorded fitness results were for something else (changed since: {', '.join(changed) or 'unknown'})"
    raise HostMemoryNotQualifiedError(
        f"host-issued memory (host_memory.enabled) needs a passing fitness result for exactly these settings, embedder "
        f"and fitness bundle: {why}. Run `{FITNESS_COMMAND} --path {service.store.path}` with the same settings "
        "(or turn host_memory.enabled off).",
        command=f"{FITNESS_COMMAND} --path {service.store.path}", fingerprint=wanted, bundle_version=bundle.version,
        decider=decider_name(service), embed_model=service.embedder.model_name,
    )


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
        elif a != b:
            out.append(key)
    return out


def open_host_memory(service: "MemoryService", trigger_mode: str) -> HostMemory | None:
    """What an adapter runs for its host searches: None unless the mode is hybrid and
    ``host_memory.enabled`` is on; then the :class:`HostMemory`, after :func:`require_fitness`."""
    if trigger_mode != "hybrid" or not service.settings.host_memory.enabled:
        return None
    require_fitness(service)
    return HostMemory(service)


__all__ = ["FITNESS_COMMAND", "FitnessResult", "Gap", "fingerprint", "fitness_results", "open_host_memory",
           "require_fitness", "run_fitness"]
