"""Forgetting in the logs: which log rows hold a forgotten memory, and erasing it there.

Part of :mod:`.erasure` (the plan's record, transcript and entity places are there). The logs
that can hold a memory's words: extraction candidates, the search log (its query, rewritten
query, request, trace and empty reason), host-issued memory decisions (their gap queries, verdict
reasons and the message the model read), the write log (a record's own rows, and other records'
comparisons with it), audit-event reasons, recorded session prefixes, ambient decisions, and
extraction attempts' and runs' errors.

A search-log row that returned a forgotten record, or whose query repeats its text, is part of
the memory: its query is replaced by the marker, and so is every string of its request and trace
that repeats the query or holds one of its words (:func:`erasure_text.scrub`). So are the
searches that replayed it, and the gap queries of host decisions that made those searches.
"""

from __future__ import annotations

import json
import sqlite3

from ..store import erasure_queries as q
from ..store.db import dumps, loads
from ..store.markers import REDACTED_REASON
from .erasure_plan import ErasurePlan
from .erasure_text import MARKER, contains_any, like_rows, query_words, scrub, scrub_trace, span_pattern

REDACTED_JSON = dumps({"redacted": True})


def plan_logs(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str], names: list[str]) -> None:
    """Fill the plan's log places for the records ``ids`` (``names``: the removed entities' names)."""
    needles, log_needles = plan.needles, plan.log_needles
    plan.candidates = q.candidate_keys_of_records(conn, ids)
    seen = set(plan.candidates)
    for row in like_rows(conn, "extraction_candidates", ["run_id", "attempt", "idx"], ["candidate", "review", "detail"], log_needles):
        key = (row["run_id"], row["attempt"], row["idx"])
        if key not in seen:
            plan.candidates.append(key)
            seen.add(key)
    plan.attempts = [(r["run_id"], r["attempt"]) for r in like_rows(
        conn, "extraction_attempts", ["run_id", "attempt"], ["error", "detail"], log_needles)]
    plan.runs = [r["id"] for r in like_rows(conn, "extraction_runs", ["id"], ["error"], log_needles)]
    _plan_search_log(conn, plan, ids, [n for n in log_needles if n not in names])
    plan.write_log = q.write_log_seqs_of_records(conn, ids)
    known = set(plan.write_log)
    plan.write_log.extend(r["seq"] for r in like_rows(conn, "write_log", ["seq"], ["candidate", "validation"], log_needles)
                          if r["seq"] not in known)
    known = set(plan.write_log)
    # Other records' writes that were compared with these (their claim comparisons quote its values).
    for record_id in ids:
        for seq in q.keys_like(conn, "write_log", "seq", "validation", f'%"{record_id}"%'):
            if seq not in known:
                plan.write_log_comparisons.append(seq)
                known.add(seq)
    plan.events = q.event_seqs_with_reason(conn, ids, REDACTED_REASON)
    known_events = set(plan.events)
    plan.events.extend(r["seq"] for r in like_rows(conn, "events", ["seq"], ["reason"], log_needles)
                       if r["seq"] not in known_events and r["reason"] != REDACTED_REASON)
    _plan_host_memory(conn, plan, ids)
    # Recorded prompt prefixes (ambient profiles, docs/ambient.md) that hold one of these records
    # or repeat its text: what the model saw stays auditable, the forgotten words do not.
    contexts = {r["session_id"] for r in like_rows(conn, "session_context", ["session_id"], ["profile_text", "system_text"], needles)}
    for record_id in ids:
        contexts.update(q.keys_like(conn, "session_context", "session_id", "profile_items", f'%"{record_id}"%'))
    plan.session_contexts = sorted(contexts)


def _plan_search_log(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str], text_needles: list[str]) -> None:
    # Rows whose query repeats the text (extraction's own lookups use the candidate's words), or
    # whose results included these records, and the replays of either. The large trace column is
    # not scanned: these conditions select the rows that matter. Entity names are left out of the
    # query match: another principal who typed the same name searched for their own reasons.
    found = [r["id"] for r in like_rows(conn, "search_log", ["id"], ["raw_query", "rewritten_query"], text_needles)]
    known = set(found)
    for record_id in ids:
        for search_id in q.keys_like(conn, "search_log", "id", "result_ids", f'%"{record_id}"%'):
            if search_id not in known:
                found.append(search_id)
                known.add(search_id)
    frontier = list(found)
    while frontier:  # a replay runs the forgotten query again
        search_id = frontier.pop()
        for replay_id in q.keys_like(conn, "search_log", "id", "request", f'%"replay_of":"{search_id}"%'):
            if replay_id not in known:
                found.append(replay_id)
                known.add(replay_id)
                frontier.append(replay_id)
    plan.search_log = found
    queries: list[str] = []
    for search_id in found:
        row = q.search_queries_of(conn, search_id)
        queries.extend(text for text in (row["raw_query"], row["rewritten_query"]) if text and text != MARKER)
    plan.queries = list(dict.fromkeys(queries))


def _plan_host_memory(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str]) -> None:
    # Host-issued memory decisions (issue 15): the message appended for the model quotes the
    # record; the decision's gap queries are the forgotten searches' queries.
    rows = {r["id"] for r in like_rows(conn, "host_memory_decisions", ["id"], ["gaps", "message", "reason"], plan.log_needles)}
    for record_id in ids:
        rows.update(q.keys_like(conn, "host_memory_decisions", "id", "candidates", f'%"{record_id}"%'))
    for search_id in plan.search_log:
        rows.update(q.keys_like(conn, "host_memory_decisions", "id", "search_ids", f'%"{search_id}"%'))
    plan.host_memory = sorted(rows)


def apply_logs(conn: sqlite3.Connection, plan: ErasurePlan) -> None:
    """Erase what :func:`plan_logs` found, inside the caller's write transaction."""
    ids = set(plan.record_ids)
    log_needles = plan.log_needles
    for run_id, attempt, idx in plan.candidates:
        q.redact_candidate(conn, run_id, attempt, idx, REDACTED_JSON)
    for run_id, attempt in plan.attempts:
        row = q.attempt_error(conn, run_id, attempt)
        q.set_attempt_error(conn, run_id, attempt, scrub(row["error"], log_needles, ids), dumps(scrub(loads(row["detail"], {}), log_needles, ids)))
    for run_id in plan.runs:
        q.set_run_error(conn, run_id, scrub(q.run_error(conn, run_id), log_needles, ids))
    _apply_search_log(conn, plan, ids)
    for seq in plan.write_log:
        q.redact_write_log(conn, seq, REDACTED_JSON)
    for seq in plan.write_log_comparisons:
        q.set_write_log_validation(conn, seq, dumps(_without_comparisons(loads(q.write_log_validation(conn, seq), {}), ids)))
    for seq in plan.events:
        q.set_event_reason(conn, seq, REDACTED_REASON)
    q.redact_ambient_reasons(conn, plan.record_ids, REDACTED_REASON)
    _apply_session_contexts(conn, plan, ids)
    _apply_host_memory(conn, plan, ids)


def _apply_search_log(conn: sqlite3.Connection, plan: ErasurePlan, ids: set[str]) -> None:
    for search_id in plan.search_log:
        row = q.search_log_texts(conn, search_id)
        # The row keeps its shape (a logged search can still be rebuilt and shows the record as
        # deleted); its query, in every form the row keeps it, goes.
        queries = [text for text in (row["raw_query"], row["rewritten_query"]) if text and text != MARKER]
        needles = [*plan.log_needles, *queries]
        words = query_words(queries)
        request = scrub(loads(row["request"], {}), needles, ids, words)
        if isinstance(request.get("request"), dict) and request["request"].get("context"):
            request["request"]["context"] = MARKER  # the turn text that framed a forgotten query
        q.set_search_log_texts(conn, search_id, MARKER, MARKER if row["rewritten_query"] else None, dumps(request),
                               dumps(scrub_trace(loads(row["trace"], {}), needles, ids, words)),
                               scrub(row["empty_reason"], needles, ids, words))


def _without_comparisons(validation: dict, ids: set[str]) -> dict:
    """A live record's write-log validation with what it quotes of the forgotten records removed:
    its claim comparisons with them (their differences name the old values) and notes naming them."""
    out = dict(validation)
    out["claim_comparisons"] = [{**c, "differences": [MARKER] if c.get("differences") else [], "added_terms": []}
                                if isinstance(c, dict) and c.get("record_id") in ids else c
                                for c in validation.get("claim_comparisons") or []]
    if isinstance(validation.get("notes"), list):
        out["notes"] = [MARKER if isinstance(n, str) and any(i in n for i in ids) else n for n in validation["notes"]]
    return out


def _apply_session_contexts(conn: sqlite3.Connection, plan: ErasurePlan, ids: set[str]) -> None:
    for session_id in plan.session_contexts:
        row = q.session_context_texts(conn, session_id)
        items = loads(row["profile_items"], []) or []
        texts = list(plan.needles) + [i.get("text") for i in items if i.get("record_id") in ids and i.get("text")]
        for item in items:
            if item.get("record_id") in ids or contains_any(item.get("text"), plan.needles):
                item["text"] = MARKER
        item_patterns = [p for p in (span_pattern(t) for t in texts) if p is not None]
        redacted = []
        for text in (row["profile_text"], row["system_text"]):
            for pattern in item_patterns:
                text = pattern.sub(MARKER, text) if text else text
            redacted.append(text)
        q.set_session_context_texts(conn, session_id, *redacted, dumps(items))


def _apply_host_memory(conn: sqlite3.Connection, plan: ErasurePlan, ids: set[str]) -> None:
    forgotten_searches = set(plan.search_log)
    for decision_id in plan.host_memory:
        row = q.host_decision_texts(conn, decision_id)
        candidates = loads(row["candidates"], []) or []
        # The gap queries that found a forgotten record, or whose search is forgotten, are forgotten queries.
        queries = [c.get("gap") for c in candidates if isinstance(c, dict) and
                   (c.get("record_id") in ids or c.get("search_id") in forgotten_searches) and c.get("gap")]
        queries = [text for text in dict.fromkeys([*queries, *plan.queries]) if isinstance(text, str)]
        own = [text for text in queries if contains_any(row["gaps"], [text]) or contains_any(row["message"], [text])]
        needles, words = [*plan.log_needles, *own], query_words(own)
        message = row["message"]
        if message is not None:
            # the same one-line JSON the model read, with every string repeating the text replaced
            message = json.dumps(scrub(loads(message, {}), needles, ids, words), ensure_ascii=False, default=str)
        # a model's verdict on a forgotten record may paraphrase it: its reason goes whole
        candidates = [{**c, "reason": MARKER} if isinstance(c, dict) and c.get("record_id") in ids else c
                      for c in scrub(candidates, needles, ids, words)]
        q.set_host_decision_texts(conn, decision_id, dumps(scrub(loads(row["gaps"], []), needles, ids, words)), dumps(candidates),
                                  message, scrub(row["reason"], needles, ids, words))
