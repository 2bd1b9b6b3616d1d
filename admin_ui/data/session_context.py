"""What a session's model saw: the recorded prompt prefix and, turn by turn, every memory it received.

Reads only (no Streamlit here, so it is tested directly): the prefix recorded on the session
(``session_context``, docs/ambient.md), the transcript, the session's searches from the search
log with their origin (``model``: its own memory_search call; ``host``: the adapter's search in
auto/hybrid), and, when the host-issued memory table of docs/host-memory.md exists, the host's
decisions per user turn with what it admitted and the exact message it appended.

A search is placed after the latest transcript turn at or before its time (searches carry no turn
number); a host decision names its user turn itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_core.text import count_tokens

from .context_sizes import Part, prefix_parts, tokens, with_shares
from .records import records_by_ids, session_info, transcript

FORGOTTEN = "[forgotten]"
STATUS_WORDS = {"deleted": "forgotten", "missing": "gone"}
# What each lifecycle event makes of a record's status (others leave it as it was).
_EVENT_STATUS = {"record.superseded": "superseded", "record.forgotten": "deleted", "record.expired": "expired",
                 "record.promoted": "confirmed"}
ORIGIN_LABELS = {"model": "the model's own memory_search", "host": "the host's search", "admin": "an admin search",
                 "eval": "an evaluation search", None: "a search of unknown origin"}


@dataclass
class Memory:
    """One record as a search or a host decision handed it over (the version is the record id's)."""

    record_id: str
    version: int | None
    status: str
    scope: str
    content: str
    admitted: bool = True
    score: float | None = None
    reason: str | None = None
    status_then: str | None = None  # the record's status when the model received it (from its events)

    @property
    def status_label(self) -> str:
        """Its status then and now: "confirmed", or "confirmed then, forgotten since"."""
        now = STATUS_WORDS.get(self.status, self.status)
        if self.status_then is None:
            return f"{now} (status then unknown)"
        then = STATUS_WORDS.get(self.status_then, self.status_then)
        return then if then == now else f"{then} then, {now} since"

    @property
    def tokens(self) -> int | None:
        """Its text's estimated tokens; None once forgotten (the text is erased, so its size is unknown)."""
        return None if self.content == FORGOTTEN else count_tokens(self.content)


@dataclass
class Delivery:
    """One way memory reached (or was offered to) the model after a turn: a search or a host decision."""

    kind: str  # "search" or "host_decision"
    at: str
    origin: str | None
    search_ids: list[str]
    query: str | None = None
    memories: list[Memory] = field(default_factory=list)
    empty_reason: str | None = None
    received: bool = True
    gaps: list[str] = field(default_factory=list)
    decider: str | None = None
    reason: str | None = None
    message: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "host_decision":
            admitted = sum(m.admitted for m in self.memories)
            return f"host decision by {self.decider}: {admitted} of {len(self.memories)} candidate(s) admitted"
        return f"{ORIGIN_LABELS.get(self.origin, self.origin)}: {len(self.memories)} result(s)"


@dataclass
class TurnView:
    turn: int
    role: str
    at: str
    content: str
    deliveries: list[Delivery] = field(default_factory=list)


@dataclass
class ContextView:
    session: dict[str, Any]
    prefix: dict[str, Any] | None
    before_turns: list[Delivery]
    turns: list[TurnView]
    host_decisions_recorded: bool

    def deliveries(self) -> list[Delivery]:
        """Every delivery in order: those before the first turn, then turn by turn."""
        return [*self.before_turns, *(d for t in self.turns for d in t.deliveries)]

    @property
    def memories_received(self) -> int:
        return sum(1 for d in self.deliveries() if d.received for m in d.memories if m.admitted)


def recent_sessions(service, limit: int = 300) -> list[dict[str, Any]]:
    """The latest sessions with who, when, the adapter and whether a prefix was recorded."""
    return service.recent_sessions(limit)


def _memory(record, record_id: str, **extra: Any) -> Memory:
    if record is None:
        return Memory(record_id, None, "missing", "", FORGOTTEN, **extra)
    content = record.content if record.status != "deleted" and record.content else FORGOTTEN
    return Memory(record.id, record.version, record.status, record.scope, content, **extra)


def build_context_view(service, session_id: str) -> ContextView | None:
    """Everything the model of ``session_id`` was shown, or None when there is no such session."""
    info = session_info(service, session_id)
    if info is None:
        return None
    prefix = service.session_context(session_id)
    turns = [TurnView(t["turn"], t["role"], t["at"], t["content"]) for t in transcript(service, session_id)]
    searches = service.session_searches(session_id)
    recorded = service.host_decisions(session_id)
    available = recorded is not None
    decisions = recorded or []
    by_decision = {sid for d in decisions for sid in d["search_ids"]}
    wanted = [rid for s in searches for rid in s["result_ids"]]
    wanted += [c.get("record_id") for d in decisions for c in d["candidates"] if isinstance(c, dict) and c.get("record_id")]
    records = records_by_ids(service, list(dict.fromkeys(wanted)))
    before: list[Delivery] = []
    for search in searches:
        if search["id"] in by_decision:
            continue  # shown with the host decision that considered it
        delivery = Delivery("search", search["at"], search["origin"], [search["id"]], query=search["raw_query"],
                            memories=[_memory(records.get(rid), rid) for rid in search["result_ids"]],
                            empty_reason=search["empty_reason"],
                            # the adapters append a host search only when it found something
                            received=bool(search["result_ids"]) or search["origin"] == "model")
        _place(turns, before, delivery, lambda t, at=search["at"]: t.at <= at)
    for decision in decisions:
        admitted = set(decision["admitted_ids"])
        memories = []
        for cand in decision["candidates"]:
            if not isinstance(cand, dict) or not cand.get("record_id"):
                continue
            memories.append(_memory(records.get(cand["record_id"]), cand["record_id"],
                                    admitted=bool(cand.get("admitted")) or cand["record_id"] in admitted,
                                    score=cand.get("score"), reason=cand.get("reason")))
        delivery = Delivery("host_decision", decision["at"], "host", list(decision["search_ids"]), memories=memories,
                            received=bool(decision.get("message")), gaps=[str(g) for g in decision["gaps"]],
                            decider=decision["decider"], reason=decision["reason"], message=decision.get("message"))
        _place(turns, before, delivery, lambda t, n=decision["turn"]: t.turn <= n)
    for turn in turns:
        turn.deliveries.sort(key=lambda d: d.at)  # stable: a search before the decision that used it
    view = ContextView(info, prefix, before, turns, available)
    _statuses_then(service, view)
    return view


def status_at(events: list[dict[str, Any]], at: str) -> str | None:
    """A record's status at ``at`` from its events (oldest first), or None when it did not exist yet."""
    status = None
    for event in events:
        if event["at"] > at:
            break
        if event["kind"] == "record.created":
            status = (event.get("payload") or {}).get("status") or "confirmed"
        elif event["kind"] in _EVENT_STATUS and status is not None:
            status = _EVENT_STATUS[event["kind"]]
    return status


def _statuses_then(service, view: ContextView) -> None:
    events: dict[str, list[dict[str, Any]]] = {}
    for delivery in view.deliveries():
        for memory in delivery.memories:
            if memory.record_id not in events:
                events[memory.record_id] = sorted(service.events_for(memory.record_id), key=lambda e: (e["at"], e.get("seq") or 0))
            memory.status_then = status_at(events[memory.record_id], delivery.at)


def context_parts(view: ContextView) -> list[Part]:
    """Every part of what the session's model was given, with its estimated tokens and share:
    the prefix (host text, policy, profile, tools), the transcript turns, each memory that reached
    the model, and the JSON around the host-issued results."""
    parts = prefix_parts(view.prefix) if view.prefix else []
    if view.turns:
        parts.append(Part("conversation turns", f"{len(view.turns)} turn(s), as recorded",
                          sum(tokens(t.content) for t in view.turns)))
    for delivery in view.deliveries():
        if not delivery.received:
            continue
        where = f"{delivery.kind.replace('_', ' ')} at {delivery.at}"
        admitted = [m for m in delivery.memories if m.admitted]
        for m in admitted:
            parts.append(Part(f"memory {m.record_id}", f"{where} · {m.status_label}", m.tokens))
        if delivery.message is not None:
            known = [m.tokens for m in admitted]
            envelope = tokens(delivery.message) - sum(t for t in known if t is not None) if None not in known else None
            parts.append(Part("tool-result JSON around it", f"{where} (ids, scores, why)",
                              max(envelope, 0) if envelope is not None else None))
    return with_shares(parts)


def _place(turns: list[TurnView], before: list[Delivery], delivery: Delivery, at_or_before) -> None:
    target = None
    for turn in turns:
        if at_or_before(turn):
            target = turn
    (target.deliveries if target is not None else before).append(delivery)
