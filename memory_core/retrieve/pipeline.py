"""The pipeline: named stages run in order over declared, typed hand-offs.

A stage is an object with a ``name``, two dataclasses and one method:

- ``Inputs``: every hand-off the stage reads, one field each (the field's name is the hand-off's
  name, its annotation the type; a default makes the input optional);
- ``Outputs``: every hand-off it writes;
- ``run(given, rec, deps) -> Outputs``: ``given`` is an ``Inputs`` built by the pipeline from the
  hand-offs so far, ``rec`` a :class:`StageRecorder` for what the trace shows (inputs and outputs
  by id and score, notes, a skip, each drop with its reason), ``deps`` the retriever's services
  (:class:`~.services.SearchServices`).

So a stage sees nothing it did not declare, and can run alone on a hand-built ``Inputs`` (a test,
a notebook: :func:`run_stage`). The pipeline checks the declarations when it is built (every
required input is a given of the search or an output of an earlier stage, of the same type) and
each stage as it runs (it returned its own ``Outputs``, every value of the declared type, and every
candidate that left ``ranking`` was dropped through ``rec.drop`` with a reason); a breach raises
:class:`StageContractError`. A stage that writes ``empty_reason`` ends the search empty: the
stages after it are recorded as skipped, except those marked ``always`` (explanation and logging).
"""

from __future__ import annotations

import time
import types
import typing
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from typing import Any, Protocol

from ..settings import RetrievalSettings
from ..telemetry import NO_TELEMETRY, Telemetry, spans
from .request import SearchRequest
from .recorder import StageRecorder
from .search_types import StageTrace
from .services import SearchServices

# What every search starts with (the hand-offs no stage writes).
GIVEN: dict[str, Any] = {
    "request": SearchRequest, "settings": RetrievalSettings, "search_id": str, "now": datetime, "at": str,
    "started": float,  # time.perf_counter() when the search began
    "trace": list[StageTrace],  # the stage traces so far (explanation and the log read them)
}
_RECORD_ID = attrgetter("record_id")


class StageContractError(AssertionError):
    """A stage broke its declared contract: it read or wrote an undeclared hand-off, wrote a value
    of the wrong type, or dropped a candidate without a reason."""


class Stage(Protocol):
    name: str
    Inputs: type
    Outputs: type

    def run(self, given: Any, rec: "StageRecorder", deps: SearchServices) -> Any:
        """Do this stage's work on ``given`` (its Inputs) and return its Outputs."""
        ...


@dataclass
class SearchRun:
    """One search as the pipeline runs it: the hand-offs so far, the stage traces and the services.

    Not a context the stages read: each stage gets only its declared inputs, built from ``handoffs``.
    """

    deps: SearchServices
    handoffs: dict[str, Any]
    stages: list[StageTrace]

    @classmethod
    def start(cls, deps: SearchServices, request: SearchRequest, settings: RetrievalSettings, search_id: str,
              now: datetime, at: str) -> "SearchRun":
        stages: list[StageTrace] = []
        given = {"request": request, "settings": settings, "search_id": search_id, "now": now, "at": at,
                 "started": time.perf_counter(), "trace": stages}
        return cls(deps, given, stages)

    @property
    def empty_reason(self) -> str | None:
        return self.handoffs.get("empty_reason")

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.handoffs["started"]) * 1000.0, 3)


class RunView:
    """A read-only view of a :class:`SearchRun` under the names the telemetry spans read
    (memory_core/telemetry/spans.py): the request, the counts so far and the decisions taken."""

    def __init__(self, run: SearchRun) -> None:
        self._run = run
        self._h = run.handoffs

    request = property(lambda self: self._h["request"])
    search_id = property(lambda self: self._h["search_id"])
    stages = property(lambda self: self._run.stages)
    results = property(lambda self: self._h.get("results") or [])
    pool = property(lambda self: self._h.get("pool") or [])
    ranking = property(lambda self: self._h.get("ranking") or [])
    dropped = property(lambda self: [d for t in self._run.stages for d in t.dropped])
    scopes = property(lambda self: self._h["access"].readable_keys if "access" in self._h else [])
    rewrite_status = property(lambda self: self._h.get("rewrite_status") or "disabled")
    rerank_outcome = property(lambda self: self._h.get("rerank_outcome"))
    gate_summary = property(lambda self: self._h.get("gate"))
    budget_used = property(lambda self: self._h.get("budget_used"))
    total_ms = property(lambda self: self._h.get("total_ms"))
    halted = property(lambda self: self._run.empty_reason is not None)

    def elapsed_ms(self) -> float:
        return self._run.elapsed_ms()


# -- declarations --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contract:
    """A stage's declared hand-offs, resolved once per stage class."""

    reads: tuple[str, ...]
    required: frozenset[str]
    writes: tuple[str, ...]
    read_types: dict[str, Any]
    write_types: dict[str, Any]
    write_checks: tuple[tuple[str, tuple[type, ...]], ...]  # (name, classes a value must be one of); Any-typed left out


def _classes(annotation: Any) -> tuple[type, ...] | None:
    """The runtime classes a value of ``annotation`` is an instance of (None: not checkable)."""
    if annotation is Any or isinstance(annotation, typing.TypeVar):
        return None
    if annotation is None or annotation is type(None):
        return (type(None),)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        out: list[type] = []
        for member in typing.get_args(annotation):
            classes = _classes(member)
            if classes is None:
                return None
            out.extend(classes)
        return tuple(out)
    if origin is not None:
        return (origin,) if isinstance(origin, type) else None
    if isinstance(annotation, type):
        return None if getattr(annotation, "_is_protocol", False) else (annotation,)
    return None


def _fields_of(cls: type, what: str, stage: str) -> tuple[list, dict[str, Any]]:
    if not isinstance(cls, type) or not hasattr(cls, "__dataclass_fields__"):
        raise StageContractError(f"stage {stage}: {what} must be a dataclass")
    return list(fields(cls)), typing.get_type_hints(cls)


@lru_cache(maxsize=None)
def contract_of(stage_class: type) -> Contract:
    """The resolved declarations of a stage class (its ``Inputs`` and ``Outputs``)."""
    name = getattr(stage_class, "name", stage_class.__name__)
    inputs, in_hints = _fields_of(getattr(stage_class, "Inputs", None), "Inputs", name)
    outputs, out_hints = _fields_of(getattr(stage_class, "Outputs", None), "Outputs", name)
    required = frozenset(f.name for f in inputs if f.default is MISSING and f.default_factory is MISSING)
    checks = tuple((f.name, c) for f in outputs if (c := _classes(out_hints[f.name])) is not None)
    return Contract(tuple(f.name for f in inputs), required, tuple(f.name for f in outputs),
                    {f.name: in_hints[f.name] for f in inputs}, {f.name: out_hints[f.name] for f in outputs}, checks)


def _without_none(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = tuple(m for m in typing.get_args(annotation) if m is not type(None))
        return members[0] if len(members) == 1 else frozenset(members)
    return annotation


def _agree(reader: Any, writer: Any) -> bool:
    """The type a stage reads is the type written (or the same, optional)."""
    return reader == writer or reader is Any or _without_none(reader) == _without_none(writer)


def check_declarations(stages: list[Stage]) -> None:
    """Every required input is a given or written by an earlier stage, with agreeing types; an
    ``always`` stage gives a default for every input a skipped stage might not have written."""
    known: dict[str, Any] = dict(GIVEN)
    never_skipped: set[str] = set(GIVEN)  # written before any stage that may end the search
    halting_seen = False
    for stage in stages:
        contract = contract_of(type(stage))
        for name in contract.reads:
            if name not in known:
                if name in contract.required:
                    raise StageContractError(f"stage {stage.name} reads {name!r}, which no earlier stage writes and the search "
                                             f"does not start with")
                continue
            if not _agree(contract.read_types[name], known[name]):
                raise StageContractError(f"stage {stage.name} reads {name!r} as {contract.read_types[name]}, but it is written "
                                         f"as {known[name]}")
            if getattr(stage, "always", False) and name in contract.required and name not in never_skipped:
                raise StageContractError(f"stage {stage.name} always runs, so {name!r} needs a default: the stage writing it "
                                         "is skipped when the search ends empty")
        for name in contract.writes:
            if name in known and not _agree(contract.write_types[name], known[name]) and name not in GIVEN:
                raise StageContractError(f"stage {stage.name} writes {name!r} as {contract.write_types[name]}, "
                                         f"but an earlier stage writes it as {known[name]}")
            if name in GIVEN:
                raise StageContractError(f"stage {stage.name} writes {name!r}, which every search is given")
            known[name] = contract.write_types[name]
            if not halting_seen or getattr(stage, "always", False):
                never_skipped.add(name)
        halting_seen = halting_seen or "empty_reason" in contract.writes


# -- running ---------------------------------------------------------------------------------------


def step(stage: Stage, run: SearchRun) -> SearchRun:
    """Run one stage under the wrapper: its inputs, trace, timing, skip-after-halt and the checks."""
    _execute(stage, run)
    return run


def _execute(stage: Stage, run: SearchRun) -> Any | None:
    """:func:`step`; returns the stage's Outputs (None when it was skipped)."""
    trace = StageTrace(stage.name)
    run.stages.append(trace)
    if run.empty_reason is not None and not getattr(stage, "always", False):
        trace.status = "skipped"
        trace.notes.append(f"skipped: the search already ended empty ({run.empty_reason})")
        return None
    contract = contract_of(type(stage))
    handoffs = run.handoffs
    missing = [name for name in contract.required if name not in handoffs]
    if missing:
        raise StageContractError(f"stage {stage.name} reads {sorted(missing)}, which no earlier stage wrote")
    given = stage.Inputs(**{name: handoffs[name] for name in contract.reads if name in handoffs})
    ranking = handoffs.get("ranking")
    before = set(map(_RECORD_ID, ranking)) if ranking else None
    rec = StageRecorder(trace)
    began = time.perf_counter()
    try:
        out = stage.run(given, rec, run.deps)
    finally:
        trace.ms = round((time.perf_counter() - began) * 1000.0, 3)
    if type(out) is not stage.Outputs:
        raise StageContractError(f"stage {stage.name} returned {type(out).__name__}, not its declared Outputs")
    for name, classes in contract.write_checks:
        value = getattr(out, name)
        if not isinstance(value, classes):
            raise StageContractError(f"stage {stage.name} wrote {name!r} as {type(value).__name__}, "
                                     f"declared {contract.write_types[name]}")
    for name in contract.writes:
        handoffs[name] = getattr(out, name)
    if before:  # (the early stages have no ranking yet: nothing to check)
        unexplained = before.difference(map(_RECORD_ID, handoffs.get("ranking") or ())).difference(rec.dropped)
        if unexplained:
            raise StageContractError(f"stage {stage.name} dropped {sorted(unexplained)} without a reason")
    return out


class Pipeline:
    """Named stages run in order by :meth:`run`; the declarations are checked here, once."""

    def __init__(self, stages: list[Stage], telemetry: Telemetry = NO_TELEMETRY) -> None:
        names = [s.name for s in stages]
        if len(set(names)) != len(names):
            raise ValueError(f"stage names must be unique: {names}")
        check_declarations(stages)
        self.stages = stages
        self.telemetry = telemetry  # a search span, with one child span per stage, when the host traces

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stages]

    def run(self, run: SearchRun) -> SearchRun:
        """Run every stage in order (see :func:`step`); each is a child span of the search's span
        (memory_core/telemetry/spans.py), made from the trace the stage records."""
        view = RunView(run)
        with spans.search(self.telemetry, view) as search:
            for stage in self.stages:
                with spans.stage(search, stage.name, view):
                    step(stage, run)
            spans.search_done(search, view)
        return run

    step = staticmethod(step)


def run_stage(stage: Stage, deps: SearchServices | None = None, **inputs: Any) -> tuple[Any, StageTrace]:
    """Run one stage alone on hand-built inputs (its ``Inputs`` fields as keywords), under the
    same wrapper and checks as in a search; returns its Outputs and its trace."""
    run = SearchRun(deps, dict(inputs), [])  # type: ignore[arg-type]
    return _execute(stage, run), run.stages[-1]
