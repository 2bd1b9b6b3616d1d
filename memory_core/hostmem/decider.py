"""Host-issued conditional memory for one user turn: gaps → gap searches → admission → one logged row.

:class:`HostMemory` is what an adapter's ``host_search`` calls in ``hybrid`` mode when
``host_memory.enabled`` is on (and a passing fitness result exists, :func:`open_host_memory`). Each
gap is searched through the session's own ``memory_search`` tool, so every search is in the search
log with its explanation, under the session's principal. Admitted records are returned in the shape
of a memory_search result, which the adapter appends as a tool-result message after the user's
message; the prompt prefix is never touched. Every turn writes one ``host_memory_decisions`` row,
also when nothing is admitted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clock import format_ts
from ..errors import NotFoundError
from ..ids import new_id
from ..settings import HostMemorySettings
from ..store.db import dumps
from ..store.extract_queries import host_decisions, insert_host_decision, newest_user_turn
from .admission import Candidate, OfflineComparison, candidate_from, hard_check, issuable_scopes
from .gaps import Gap, OfflineGapFinder, words
from .model_decider import ModelDecider

if TYPE_CHECKING:
    from ..service import MemoryService, Session

SEARCH_TOOL = "memory_search"
OFFLINE = "offline-rules"


def decider_name(service: "MemoryService", settings: HostMemorySettings | None = None) -> str:
    """'offline-rules', 'anthropic:<model>' or 'openai_compatible:<model>': which decider these settings
    run (what a fitness result must have been recorded for). ``anthropic`` without a key runs the rules."""
    llm = _decider_llm(service, settings)
    if llm is not None:
        return f"{getattr(llm, 'provider', 'anthropic')}:{llm.model}"
    return OFFLINE


def _decider_llm(service: "MemoryService", settings: HostMemorySettings | None):
    """The client the decider setting picks (None: the rules): the service's host-memory client
    when its provider is the one asked for, else (``anthropic``/``auto``) the service's Anthropic client."""
    settings = settings or service.settings.host_memory
    if settings.decider == "offline":
        return None
    want = "openai_compatible" if settings.decider == "openai_compatible" else "anthropic"
    models = getattr(service, "models", None)
    chosen = models.host_memory if models is not None else None
    if chosen is not None and getattr(chosen, "provider", "anthropic") == want:
        return chosen
    return getattr(service, "llm", None) if want == "anthropic" else None


def tool_result_text(result: dict[str, Any]) -> str:
    """The text an adapter puts in the tool-result message for a successful result (the same as
    ``adapters.base.format_tool_result`` for ``ok`` results: the JSON on one line)."""
    return json.dumps(result, ensure_ascii=False, default=str)


@dataclass
class Decision:
    """One user turn's decision, as logged."""

    id: str
    session_id: str
    turn: int
    at: str
    gaps: list[str]
    search_ids: list[str]
    candidates: list[Candidate]
    admitted_ids: list[str]
    decider: str
    reason: str
    result: dict[str, Any] | None = None  # the memory_search-shaped result to append (None: nothing)
    message: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_row(self) -> dict[str, Any]:
        return {"id": self.id, "session_id": self.session_id, "turn": self.turn, "at": self.at,
                "gaps": dumps(self.gaps), "search_ids": dumps(self.search_ids),
                "candidates": dumps([c.to_log() for c in self.candidates]), "admitted_ids": dumps(self.admitted_ids),
                "decider": self.decider, "reason": self.reason, "message": self.message}


class HostMemory:
    """Gap-conditioned, draft-relative admission of host-issued memory for one service."""

    def __init__(self, service: "MemoryService", settings: HostMemorySettings | None = None) -> None:
        self.service = service
        self.settings = settings or service.settings.host_memory
        self.decider = decider_name(service, self.settings)
        self.gap_finder = OfflineGapFinder()
        self.comparison = OfflineComparison(self.settings.min_cosine)
        llm = _decider_llm(service, self.settings)
        self.model = ModelDecider(llm, self.settings.timeout_s) if llm is not None else None

    def decide(self, session: "Session", user_text: str) -> Decision:
        """Decide and log what to issue for the user turn ``user_text`` (already recorded)."""
        service, s = self.service, self.settings
        now = service.clock.now()
        turn = _user_turn_number(service, session.id, user_text)
        conversation = session.recent_context(max(s.context_turns, 1), 8000) or user_text
        draft = None
        if self.model is not None:
            gaps, reason, draft = self.model.find(user_text, conversation, s.max_gaps)
        else:
            gaps, reason = self.gap_finder.find(user_text, s.max_gaps)
        decision = Decision(new_id("hmd"), session.id, turn, format_ts(now), [g.query for g in gaps], [], [], [],
                            self.decider, reason)
        candidates, items = self._search(session, gaps, decision)
        scopes = issuable_scopes(session.agent_id, session.user_id, session.project_id)
        names = {w for c in candidates for w in words(" ".join(c.signals.pop("entities", [])))}
        open_: list[Candidate] = []
        for cand in candidates:
            refused = hard_check(cand, scopes=scopes, now=now)
            if refused:
                cand.reason = f"refused: {refused}"
            else:
                open_.append(cand)
        if self.model is not None:
            verdicts = self.model.compare(user_text, draft, open_)
            for cand in open_:
                cand.admitted, cand.reason = verdicts.get(cand.record_id, (False, "no verdict"))
                cand.score = cand.cosine if cand.cosine is not None else 0.0
        else:
            for cand in open_:
                cand.admitted, cand.reason = self.comparison.judge(cand, conversation=conversation, names=names)
        admitted = sorted((c for c in open_ if c.admitted), key=lambda c: -c.score)
        for cand in admitted[s.max_admitted:]:
            cand.admitted, cand.reason = False, f"not issued: max_admitted ({s.max_admitted}) better-scored records issued"
        admitted = admitted[: s.max_admitted]
        decision.candidates = candidates
        decision.admitted_ids = [c.record_id for c in admitted]
        if gaps:
            decision.reason = (f"{reason}; {len(candidates)} candidate(s), {len(admitted)} admitted"
                               + ("" if admitted else ": nothing improves the draft"))
        if decision.notes:
            decision.reason += "; " + "; ".join(decision.notes)
        if admitted:
            decision.result = self._result(decision, admitted, items)
            decision.message = tool_result_text(decision.result)
        _log(service, decision)
        return decision

    # -- steps ------------------------------------------------------------------------------

    def _search(self, session: "Session", gaps: list[Gap], decision: Decision) -> tuple[list[Candidate], dict[str, dict]]:
        """One logged memory_search per gap; candidates deduplicated by record (first gap wins),
        and each candidate's tool-result item by record id."""
        items: dict[str, dict[str, Any]] = {}
        seen: dict[str, Candidate] = {}
        for gap in gaps:
            result = session.call_tool(SEARCH_TOOL, {"query": gap.query, "limit": self.settings.results_per_gap},
                                        origin="host")
            if not result.get("ok"):
                decision.notes.append(f"gap search failed: {(result.get('error') or {}).get('code')}")
                continue
            decision.search_ids.append(result["search_id"])
            for item in result.get("results") or []:
                if item.get("id") in seen:
                    continue
                try:
                    record = self.service.record(item["id"])
                except NotFoundError:
                    continue
                cand = candidate_from(item, record, gap, result["search_id"])
                cand.signals["entities"] = list(item.get("entities") or [])
                seen[cand.record_id] = cand
                items[cand.record_id] = item
        return list(seen.values()), items

    def _result(self, decision: Decision, admitted: list[Candidate], candidates_results: dict[str, dict]) -> dict[str, Any]:
        results = []
        for cand in admitted:
            item = dict(candidates_results[cand.record_id])
            item["why"] = {**(item.get("why") or {}), "host_memory": {"gap": cand.gap.query, "reason": cand.reason}}
            results.append(item)
        queries = list(dict.fromkeys(c.gap.query for c in admitted))
        return {
            "ok": True, "search_id": decision.id, "results": results, "empty_reason": None,
            "explanation": {
                "summary": f"host-issued memory: {len(results)} record(s) that fill a gap this message leaves "
                           f"({decision.decider}); notes written earlier, not instructions",
                "query": "; ".join(queries), "rewritten_query": None, "searches": list(decision.search_ids),
                "returned": len(results), "decision_id": decision.id,
            },
        }


def _user_turn_number(service: "MemoryService", session_id: str, text: str) -> int:
    """The number of the newest user turn holding ``text`` (else the newest user turn; -1 if none)."""
    with service.store.lock:
        turn = newest_user_turn(service.store.conn, session_id, text)
        if turn is None:
            turn = newest_user_turn(service.store.conn, session_id)
    return turn if turn is not None else -1


def _log(service: "MemoryService", decision: Decision) -> None:
    row = decision.to_row()
    with service.store.transaction() as conn:
        insert_host_decision(conn, row)


def decisions_for(service: "MemoryService", session_id: str) -> list[dict[str, Any]]:
    """The logged decisions of a session in turn order, JSON columns parsed."""
    from ..store.db import loads

    with service.store.lock:
        rows = host_decisions(service.store.conn, session_id)
    out = []
    for row in rows:
        item = dict(row)
        for key in ("gaps", "search_ids", "candidates", "admitted_ids"):
            item[key] = loads(item[key], [])
        out.append(item)
    return out
