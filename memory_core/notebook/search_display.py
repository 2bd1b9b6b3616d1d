"""Notebook displays of a search: the response, one result, the stage trace and one stage.

Each ``*_html`` function is what the object's ``_repr_html_`` returns, and each ``*_frame``
function what its ``to_dataframe()`` returns. An empty response leads with the gate's reason.
"""

from __future__ import annotations

from typing import Any

from . import markup as m
from .safe import safe_html

NOT_LOGGED = "(not stored in the log)"
RESULT_COLUMNS = (
    "rank", "record_id", "type", "status", "scope", "source_kind", "matched_by", "dense_rank", "cosine",
    "lexical_rank", "lexical", "entity_rank", "fused_rank", "fused_score", "freshness_factor", "gate", "collapse",
    "budget", "tokens", "truncated", "content",
)
STAGE_RECORD_COLUMNS = ("record_id", "output", "reason")


# -- rows -------------------------------------------------------------------------------------


def explanation_row(explanation, content: Any = NOT_LOGGED) -> dict[str, Any]:
    """One result's signals and decisions as a flat row (the columns of ``RESULT_COLUMNS``)."""
    e = explanation
    gens = e.generators or {}
    return {
        "rank": e.rank, "record_id": e.record_id, "type": e.type, "status": e.status, "scope": e.scope,
        "source_kind": e.source_kind, "matched_by": ", ".join(e.matched_by),
        "dense_rank": (gens.get("dense") or {}).get("rank"), "cosine": e.cosine,
        "lexical_rank": (gens.get("lexical") or {}).get("rank"), "lexical": (gens.get("lexical") or {}).get("lexical"),
        "entity_rank": (gens.get("entity") or {}).get("rank"), "fused_rank": e.fused_rank, "fused_score": e.fused_score,
        "freshness_factor": (e.freshness or {}).get("factor"), "gate": e.gate, "collapse": e.collapse,
        "budget": e.budget, "tokens": e.tokens, "truncated": e.truncated, "content": content,
    }


def result_row(result) -> dict[str, Any]:
    return explanation_row(result.explanation, NOT_LOGGED if result.content is None else result.content)


def _signal(value: Any) -> str:
    """A generator signal in a few characters: a rounded score, or the names of matched entities."""
    if isinstance(value, float):
        return m.text(round(value, 4))
    if isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
        return ", ".join(m.text(v["name"]) for v in value)
    return m.text(value)


def _generators_text(explanation) -> str:
    parts = []
    for name, detail in (explanation.generators or {}).items():
        signals = ", ".join(f"{k} {_signal(v)}" for k, v in (detail or {}).items() if k != "rank")
        parts.append(f"{name} #{(detail or {}).get('rank')}" + (f" ({signals})" if signals else ""))
    return "; ".join(parts)


def _explanation_pairs(e) -> list[tuple[str, Any]]:
    links = ", ".join(f"{l.get('name')} ({l.get('kind')}, {l.get('role')})" for l in e.entity_links or [])
    items = [
        ("query", e.raw_query), ("rewritten query", e.rewritten_query), ("matched by", ", ".join(e.matched_by)),
        ("generators", _generators_text(e)), ("fused rank", e.fused_rank), ("fused score", e.fused_score),
        ("freshness", e.freshness), ("rerank", e.rerank), ("gate", e.gate), ("duplicate collapse", e.collapse),
        ("token budget", e.budget), ("tokens", e.tokens), ("truncated", e.truncated or None),
        ("source kind", e.source_kind), ("status", e.status), ("scope", e.scope), ("type", e.type),
        ("created", e.created_at), ("event time", e.event_at), ("valid from", e.valid_from),
        ("valid until", e.valid_until), ("expires", e.expires_at), ("entity links", links),
    ]
    return [(k, v) for k, v in items if v not in (None, "", [], {})]


def dropped_rows(trace) -> list[dict[str, Any]]:
    """Every candidate any stage dropped, with the stage and its reason, in pipeline order."""
    return [{"stage": s.name, "record_id": d.get("id"), "reason": d.get("reason")} for s in trace.stages for d in s.dropped]


# -- HTML -------------------------------------------------------------------------------------


@safe_html
def response_html(response) -> str:
    """A search response: who asked what, the empty reason or the results, explanations, stages."""
    req, ex = response.request, response.explanation
    head = (f"search {response.search_id} · {response.at} · agent {req.agent_id} acting for {req.user_id} · "
            f"{response.total_ms:.1f} ms" + (" · opened from the search log" if response.from_log else ""))
    parts = [m.heading(head), m.pairs([("query", req.query)] + ([("rewritten", f"{ex.rewritten_query} ({ex.rewrite_status})")]
                                                               if ex.rewritten_query else []))]
    if response.empty:
        reason = response.empty_reason or ex.empty_reason or "no reason was recorded"
        parts.append(m.box("No memory returned", reason, ex.summary if reason not in (ex.summary or "") else None, kind="empty"))
    else:
        parts.append(m.box(f"{len(response.results)} result(s)", ex.summary, kind="ok"))
        rows = [{**result_row(r), "generators": _generators_text(r.explanation)} for r in response.results]
        parts.append(m.table(rows, ["rank", "record_id", "type", "status", "scope", "generators", "fused_rank", "gate", "content"],
                             long=["content", "gate"]))
        for r in response.results:
            parts.append(m.details(f"why #{r.explanation.rank} {r.record_id} was returned", m.pairs(_explanation_pairs(r.explanation))))
    gate = ex.gate or {}
    parts.append(m.details("gate and candidates", m.pairs([("candidates per generator", ex.candidates), *gate.items(),
                                                          ("near-duplicates collapsed", ex.collapsed), ("rerank", ex.rerank),
                                                          ("budget", ex.budget)]), open=response.empty))
    parts.append(m.details("dropped along the way", m.table(dropped_rows(response.trace), ["stage", "record_id", "reason"],
                                                            long=["reason"], empty="No stage dropped a candidate."),
                           open=response.empty))
    parts.append(m.details("readable scopes (the search looked nowhere else)",
                           m.table([{"scope": k, "why readable": v} for k, v in sorted((ex.scopes or {}).items())],
                                   empty="No readable scopes.")))
    parts.append(m.details(f"stages ({len(response.trace.stages)}, {response.trace.total_ms:.1f} ms)",
                           m.table(response.trace.stage_rows(), long=["note"], empty="No stage trace.")))
    parts.append(m.para("response.trace.stages[i] shows one stage; response.to_dataframe() gives the results as a table.", "muted"))
    return m.page(*parts)


@safe_html
def result_html(result) -> str:
    """One returned record: the text handed back and why it was returned."""
    e = result.explanation
    content = NOT_LOGGED if result.content is None else result.content
    return m.page(m.heading(f"#{e.rank} {e.record_id} · {e.type} · {e.status} · {e.scope}"),
                  m.pairs([("content", content)], long=["content"]), m.pairs(_explanation_pairs(e)))


@safe_html
def explanation_html(explanation) -> str:
    """Why one record was returned (without its text)."""
    return m.page(m.heading(f"why #{explanation.rank} {explanation.record_id} was returned"),
                  m.pairs(_explanation_pairs(explanation)))


@safe_html
def trace_html(trace) -> str:
    """Every stage of a search in order, with timings, drops and the first note."""
    return m.page(m.heading(f"trace of {trace.search_id} · {len(trace.stages)} stages · {trace.total_ms:.1f} ms"),
                  m.table(trace.stage_rows(), long=["note"], empty="No stage trace."),
                  m.details("dropped along the way", m.table(dropped_rows(trace), ["stage", "record_id", "reason"],
                                                             long=["reason"], empty="No stage dropped a candidate.")))


def _side(values: dict[str, Any]) -> str:
    """A stage's inputs or outputs: candidate lists as tables, everything else as key/value rows."""
    if not values:
        return '<div class="am-muted">(none)</div>'
    scalars, parts = [], []
    for key, value in values.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            columns = list(dict.fromkeys(k for v in value for k in v))
            parts.append(f"<div>{m.esc(key)} ({len(value)})</div>" + m.table(value, columns, long=["gate", "reason"]))
        else:
            scalars.append((key, value))
    return (m.pairs(scalars) if scalars else "") + "".join(parts)


@safe_html
def stage_html(stage) -> str:
    """One stage: inputs → outputs, what it dropped and why, its notes and its time."""
    notes = "".join(m.para(n, "warn") for n in stage.notes)
    grid = (f"<table><tr><th>inputs</th><th>outputs</th></tr><tr><td>{_side(stage.inputs)}</td>"
            f"<td>{_side(stage.outputs)}</td></tr></table>")
    dropped = m.table(stage.dropped, ["id", "reason"], long=["reason"], empty="This stage dropped nothing.")
    return m.page(m.heading(f"stage {stage.name} · {stage.status} · {stage.ms:.3f} ms"), notes, grid,
                  m.heading(f"dropped here: {len(stage.dropped)}"), dropped)


# -- data frames ------------------------------------------------------------------------------


def response_frame(response):
    """One row per returned record (``RESULT_COLUMNS``); an empty response gives an empty frame
    whose ``attrs`` still carry the search id and the empty reason."""
    import pandas as pd

    frame = pd.DataFrame([result_row(r) for r in response.results], columns=list(RESULT_COLUMNS))
    frame.attrs.update({"search_id": response.search_id, "query": response.request.query,
                        "empty_reason": response.empty_reason})
    return frame


def result_frame(result):
    import pandas as pd

    return pd.DataFrame([result_row(result)], columns=list(RESULT_COLUMNS))


def explanation_frame(explanation):
    import pandas as pd

    row = explanation_row(explanation)
    row.pop("content")
    return pd.DataFrame([row])


def trace_frame(trace):
    """One row per stage: order, name, status, milliseconds, drops, notes."""
    import pandas as pd

    rows = [{**row, "note": "; ".join(s.notes)} for row, s in zip(trace.stage_rows(), trace.stages)]
    return pd.DataFrame(rows, columns=["#", "stage", "status", "ms", "dropped", "note"])


def stage_frame(stage):
    """The records this stage output or dropped: one row each with its signals, ``output`` naming
    the list it is in (``candidates``, ``fused``, ``passed``, ``kept``… or ``dropped``) and the
    drop reason. A stage that handles no records gives its inputs and outputs as
    ``side, key, value`` rows instead."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for key, value in stage.outputs.items():
        if not isinstance(value, list):
            continue
        for item in value:
            if isinstance(item, dict) and "id" in item:
                rows.append({"record_id": item["id"], "output": key, "reason": None,
                             **{k: v for k, v in item.items() if k != "id"}})
            elif isinstance(item, str):
                rows.append({"record_id": item, "output": key, "reason": None})
    rows += [{"record_id": d.get("id"), "output": "dropped", "reason": d.get("reason")} for d in stage.dropped]
    if rows:
        columns = list(dict.fromkeys([*STAGE_RECORD_COLUMNS, *(k for r in rows for k in r)]))
        return pd.DataFrame(rows, columns=columns)
    side = [{"side": name, "key": k, "value": m.text(v)} for name, values in (("input", stage.inputs), ("output", stage.outputs))
            for k, v in values.items()]
    return pd.DataFrame(side, columns=["side", "key", "value"])
