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

from ..store.db import dumps, loads
from ..store.migrations_hardening import REDACTED_REASON
from .erasure_plan import ErasurePlan
from .erasure_text import MARKER, contains_any, like_rows, marks_for, query_words, scrub, scrub_trace, span_pattern

REDACTED_JSON = dumps({"redacted": True})


def plan_logs(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str], names: list[str]) -> None:
    """Fill the plan's log places for the records ``ids`` (``names``: the removed entities' names)."""
    needles, log_needles = plan.needles, plan.log_needles
    marks = marks_for(ids)
    plan.candidates = [(r["run_id"], r["attempt"], r["idx"]) for r in conn.execute(
        f"SELECT run_id, attempt, idx FROM extraction_candidates WHERE record_id IN ({marks})", ids)]
    seen = set(plan.candidates)
    for row in like_rows(conn, "SELECT run_id, attempt, idx, candidate, review, detail FROM extraction_candidates",
                         ["candidate", "review", "detail"], log_needles):
        key = (row["run_id"], row["attempt"], row["idx"])
        if key not in seen:
            plan.candidates.append(key)
            seen.add(key)
    plan.attempts = [(r["run_id"], r["attempt"]) for r in like_rows(
        conn, "SELECT run_id, attempt, error, detail FROM extraction_attempts", ["error", "detail"], log_needles)]
    plan.runs = [r["id"] for r in like_rows(conn, "SELECT id, error FROM extraction_runs", ["error"], log_needles)]
    _plan_search_log(conn, plan, ids, [n for n in log_needles if n not in names])
    plan.write_log = [r["seq"] for r in conn.execute(f"SELECT seq FROM write_log WHERE record_id IN ({marks})", ids)]
    known = set(plan.write_log)
    plan.write_log.extend(r["seq"] for r in like_rows(conn, "SELECT seq, candidate, validation FROM write_log",
                                                      ["candidate", "validation"], log_needles) if r["seq"] not in known)
    known = set(plan.write_log)
    # Other records' writes that were compared with these (their claim comparisons quote its values).
    for record_id in ids:
        for row in conn.execute("SELECT seq FROM write_log WHERE validation LIKE ?", (f'%"{record_id}"%',)):
            if row["seq"] not in known:
                plan.write_log_comparisons.append(row["seq"])
                known.add(row["seq"])
    plan.events = [r["seq"] for r in conn.execute(
        f"SELECT seq FROM events WHERE record_id IN ({marks}) AND reason IS NOT NULL AND reason != ? "
        "AND kind != 'record.forgotten'", [*ids, REDACTED_REASON])]
    known_events = set(plan.events)
    plan.events.extend(r["seq"] for r in like_rows(conn, "SELECT seq, reason FROM events", ["reason"], log_needles)
                       if r["seq"] not in known_events and r["reason"] != REDACTED_REASON)
    _plan_host_memory(conn, plan, ids)
    # Recorded prompt prefixes (ambient profiles, docs/ambient.md) that hold one of these records
    # or repeat its text: what the model saw stays auditable, the forgotten words do not.
    contexts = {r["session_id"] for r in like_rows(conn, "SELECT session_id, profile_text, system_text FROM session_context",
                                                   ["profile_text", "system_text"], needles)}
    for record_id in ids:
        contexts.update(r["session_id"] for r in conn.execute(
            "SELECT session_id FROM session_context WHERE profile_items LIKE ?", (f'%"{record_id}"%',)))
    plan.session_contexts = sorted(contexts)


def _plan_search_log(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str], text_needles: list[str]) -> None:
    # Rows whose query repeats the text (extraction's own lookups use the candidate's words), or
    # whose results included these records, and the replays of either. The large trace column is
    # not scanned: these conditions select the rows that matter. Entity names are left out of the
    # query match: another principal who typed the same name searched for their own reasons.
    found = [r["id"] for r in like_rows(conn, "SELECT id, raw_query, rewritten_query FROM search_log",
                                        ["raw_query", "rewritten_query"], text_needles)]
    known = set(found)
    for record_id in ids:
        for row in conn.execute("SELECT id FROM search_log WHERE result_ids LIKE ?", (f'%"{record_id}"%',)):
            if row["id"] not in known:
                found.append(row["id"])
                known.add(row["id"])
    frontier = list(found)
    while frontier:  # a replay runs the forgotten query again
        search_id = frontier.pop()
        for row in conn.execute("SELECT id FROM search_log WHERE request LIKE ?", (f'%"replay_of":"{search_id}"%',)):
            if row["id"] not in known:
                found.append(row["id"])
                known.add(row["id"])
                frontier.append(row["id"])
    plan.search_log = found
    queries: list[str] = []
    for search_id in found:
        row = conn.execute("SELECT raw_query, rewritten_query FROM search_log WHERE id = ?", (search_id,)).fetchone()
        queries.extend(q for q in (row["raw_query"], row["rewritten_query"]) if q and q != MARKER)
    plan.queries = list(dict.fromkeys(queries))


def _plan_host_memory(conn: sqlite3.Connection, plan: ErasurePlan, ids: list[str]) -> None:
    # Host-issued memory decisions (issue 15): the message appended for the model quotes the
    # record; the decision's gap queries are the forgotten searches' queries.
    rows = {r["id"] for r in like_rows(conn, "SELECT id, gaps, message, reason FROM host_memory_decisions",
                                       ["gaps", "message", "reason"], plan.log_needles)}
    for record_id in ids:
        rows.update(r["id"] for r in conn.execute("SELECT id FROM host_memory_decisions WHERE candidates LIKE ?", (f'%"{record_id}"%',)))
    for search_id in plan.search_log:
        rows.update(r["id"] for r in conn.execute("SELECT id FROM host_memory_decisions WHERE search_ids LIKE ?", (f'%"{search_id}"%',)))
    plan.host_memory = sorted(rows)


def apply_logs(conn: sqlite3.Connection, plan: ErasurePlan) -> None:
    """Erase what :func:`plan_logs` found, inside the caller's write transaction."""
    ids = set(plan.record_ids)
    log_needles = plan.log_needles
    for run_id, attempt, idx in plan.candidates:
        conn.execute(
            "UPDATE extraction_candidates SET candidate = ?, review = ?, detail = ? WHERE run_id = ? AND attempt = ? AND idx = ?",
            (REDACTED_JSON, REDACTED_JSON, REDACTED_JSON, run_id, attempt, idx))
    for run_id, attempt in plan.attempts:
        row = conn.execute("SELECT error, detail FROM extraction_attempts WHERE run_id = ? AND attempt = ?", (run_id, attempt)).fetchone()
        conn.execute("UPDATE extraction_attempts SET error = ?, detail = ? WHERE run_id = ? AND attempt = ?",
                     (scrub(row["error"], log_needles, ids), dumps(scrub(loads(row["detail"], {}), log_needles, ids)), run_id, attempt))
    for run_id in plan.runs:
        row = conn.execute("SELECT error FROM extraction_runs WHERE id = ?", (run_id,)).fetchone()
        conn.execute("UPDATE extraction_runs SET error = ? WHERE id = ?", (scrub(row["error"], log_needles, ids), run_id))
    _apply_search_log(conn, plan, ids)
    for seq in plan.write_log:
        conn.execute("UPDATE write_log SET candidate = ?, validation = ? WHERE seq = ?", (REDACTED_JSON, REDACTED_JSON, seq))
    for seq in plan.write_log_comparisons:
        row = conn.execute("SELECT validation FROM write_log WHERE seq = ?", (seq,)).fetchone()
        conn.execute("UPDATE write_log SET validation = ? WHERE seq = ?", (dumps(_without_comparisons(loads(row["validation"], {}), ids)), seq))
    for seq in plan.events:
        conn.execute("UPDATE events SET reason = ? WHERE seq = ?", (REDACTED_REASON, seq))
    marks = marks_for(plan.record_ids)
    conn.execute(f"UPDATE ambient_decisions SET reason = ? WHERE record_id IN ({marks}) AND reason IS NOT NULL",
                 [REDACTED_REASON, *plan.record_ids])
    _apply_session_contexts(conn, plan, ids)
    _apply_host_memory(conn, plan, ids)


def _apply_search_log(conn: sqlite3.Connection, plan: ErasurePlan, ids: set[str]) -> None:
    for search_id in plan.search_log:
        row = conn.execute("SELECT raw_query, rewritten_query, request, trace, empty_reason FROM search_log WHERE id = ?",
                           (search_id,)).fetchone()
        # The row keeps its shape (a logged search can still be rebuilt and shows the record as
        # deleted); its query, in every form the row keeps it, goes.
        queries = [q for q in (row["raw_query"], row["rewritten_query"]) if q and q != MARKER]
        needles = [*plan.log_needles, *queries]
        words = query_words(queries)
        request = scrub(loads(row["request"], {}), needles, ids, words)
        if isinstance(request.get("request"), dict) and request["request"].get("context"):
            request["request"]["context"] = MARKER  # the turn text that framed a forgotten query
        conn.execute(
            "UPDATE search_log SET raw_query = ?, rewritten_query = ?, request = ?, trace = ?, empty_reason = ? WHERE id = ?",
            (MARKER, MARKER if row["rewritten_query"] else None, dumps(request),
             dumps(scrub_trace(loads(row["trace"], {}), needles, ids, words)),
             scrub(row["empty_reason"], needles, ids, words), search_id))


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
        row = conn.execute("SELECT profile_text, system_text, profile_items FROM session_context WHERE session_id = ?",
                           (session_id,)).fetchone()
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
        conn.execute("UPDATE session_context SET profile_text = ?, system_text = ?, profile_items = ? WHERE session_id = ?",
                     (*redacted, dumps(items), session_id))


def _apply_host_memory(conn: sqlite3.Connection, plan: ErasurePlan, ids: set[str]) -> None:
    forgotten_searches = set(plan.search_log)
    for decision_id in plan.host_memory:
        row = conn.execute("SELECT gaps, search_ids, candidates, message, reason FROM host_memory_decisions WHERE id = ?",
                           (decision_id,)).fetchone()
        candidates = loads(row["candidates"], []) or []
        # The gap queries that found a forgotten record, or whose search is forgotten, are forgotten queries.
        queries = [c.get("gap") for c in candidates if isinstance(c, dict) and
                   (c.get("record_id") in ids or c.get("search_id") in forgotten_searches) and c.get("gap")]
        queries = [q for q in dict.fromkeys([*queries, *(q for q in plan.queries)]) if isinstance(q, str)]
        own = [q for q in queries if contains_any(row["gaps"], [q]) or contains_any(row["message"], [q])]
        needles, words = [*plan.log_needles, *own], query_words(own)
        message = row["message"]
        if message is not None:
            # the same one-line JSON the model read, with every string repeating the text replaced
            message = json.dumps(scrub(loads(message, {}), needles, ids, words), ensure_ascii=False, default=str)
        # a model's verdict on a forgotten record may paraphrase it: its reason goes whole
        candidates = [{**c, "reason": MARKER} if isinstance(c, dict) and c.get("record_id") in ids else c
                      for c in scrub(candidates, needles, ids, words)]
        conn.execute("UPDATE host_memory_decisions SET gaps = ?, candidates = ?, message = ?, reason = ? WHERE id = ?",
                     (dumps(scrub(loads(row["gaps"], []), needles, ids, words)), dumps(candidates), message,
                      scrub(row["reason"], needles, ids, words), decision_id))
