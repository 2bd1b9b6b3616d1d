"""The overview dashboard: what the store holds over time, how searches go, what waits for people.

Each ``*_data`` function is one read-only query shaped for its chart; each ``*_figure`` draws it
with plotly. Labels are ids, kinds and reason classes, never memory content, and every label is
passed through as plain text (plotly does not render it as HTML here because ``_plain`` escapes
``<`` and ``>``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

import plotly.graph_objects as go

from memory_core.charts import empty_figure
from memory_core.store.db import loads


def _plain(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _layout(fig: go.Figure, height: int = 320) -> go.Figure:
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=-0.3))
    return fig


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = q * (len(ordered) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


# -- store composition over time --------------------------------------------------------------


def composition_over_time_data(service) -> list[dict[str, Any]]:
    """Records created so far, by type, at the end of each day that saw a write (tombstones excluded)."""
    rows = service.store.query(
        "SELECT substr(created_at, 1, 10) AS day, type, COUNT(*) AS n FROM records WHERE status != 'deleted' "
        "GROUP BY day, type ORDER BY day")
    running: Counter = Counter()
    out = []
    for day in sorted({r["day"] for r in rows}):
        for r in rows:
            if r["day"] == day:
                running[r["type"]] += r["n"]
        out.extend({"day": day, "type": t, "records": n} for t, n in sorted(running.items()))
    return out


def composition_over_time_figure(rows: list[dict[str, Any]]) -> go.Figure:
    if not rows:
        return empty_figure("No records yet")
    fig = go.Figure()
    for kind in sorted({r["type"] for r in rows}):
        points = [r for r in rows if r["type"] == kind]
        fig.add_trace(go.Scatter(x=[p["day"] for p in points], y=[p["records"] for p in points], name=_plain(kind),
                                 mode="lines", stackgroup="types", line_shape="hv"))
    fig.update_yaxes(title_text="records")
    return _layout(fig)


# -- searches per day ---------------------------------------------------------------------------


def searches_per_day_data(service) -> list[dict[str, Any]]:
    """Per day: searches, empty answers, and p50 / p95 latency in milliseconds."""
    by_day: dict[str, list] = defaultdict(list)
    for r in service.store.query("SELECT substr(at, 1, 10) AS day, total_ms, result_ids FROM search_log ORDER BY seq"):
        by_day[r["day"]].append((float(r["total_ms"] or 0.0), not loads(r["result_ids"], [])))
    out = []
    for day in sorted(by_day):
        ms = [m for m, _ in by_day[day]]
        empty = sum(1 for _, e in by_day[day] if e)
        out.append({"day": day, "searches": len(ms), "empty": empty, "empty_rate": empty / len(ms),
                    "p50_ms": round(_percentile(ms, 0.5), 2), "p95_ms": round(_percentile(ms, 0.95), 2)})
    return out


def _day_label(day: str) -> str:
    """"2026-04-16" → "16 Apr 2026" (the x axis is categorical: only days with searches appear)."""
    try:
        return datetime.strptime(day, "%Y-%m-%d").strftime("%d %b %Y").lstrip("0")
    except ValueError:
        return day


def searches_per_day_figure(rows: list[dict[str, Any]]) -> go.Figure:
    if not rows:
        return empty_figure("No searches logged yet")
    days = [_day_label(r["day"]) for r in rows]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=days, y=[r["searches"] - r["empty"] for r in rows], name="answered", marker_color="#3b6fb6"))
    fig.add_trace(go.Bar(x=days, y=[r["empty"] for r in rows], name="empty answer", marker_color="#b0b7c3"))
    fig.add_trace(go.Scatter(x=days, y=[r["p50_ms"] for r in rows], name="p50 latency (ms)", yaxis="y2",
                             mode="lines+markers", line=dict(color="#2a9d8f")))
    fig.add_trace(go.Scatter(x=days, y=[r["p95_ms"] for r in rows], name="p95 latency (ms)", yaxis="y2",
                             mode="lines+markers", line=dict(color="#e76f51", dash="dot")))
    fig.update_layout(barmode="stack", yaxis=dict(title="searches"),
                      yaxis2=dict(title="milliseconds", overlaying="y", side="right", rangemode="tozero"))
    fig.update_xaxes(type="category")
    return _layout(fig)


# -- empty answers --------------------------------------------------------------------------------


def reason_class(reason: str) -> str:
    """A reason with its numbers and details taken out, so equal causes count together."""
    text = re.sub(r"\([^)]*\)", "", reason or "")
    text = re.sub(r"\d+(?:\.\d+)?", "N", text)
    return " ".join(text.split(";")[0].split()) or "no reason recorded"


def empty_reasons_data(service, top: int = 6) -> dict[str, Any]:
    """The empty-answer rate over every logged search, and the most common reasons."""
    rows = service.store.query("SELECT result_ids, empty_reason FROM search_log")
    empty = [r["empty_reason"] for r in rows if not loads(r["result_ids"], [])]
    counts = Counter(reason_class(r or "") for r in empty).most_common(top)
    return {"searches": len(rows), "empty": len(empty), "rate": (len(empty) / len(rows)) if rows else 0.0,
            "reasons": [{"reason": reason, "searches": n} for reason, n in counts]}


def empty_reasons_figure(data: dict[str, Any]) -> go.Figure:
    if not data["reasons"]:
        return empty_figure("No empty answers")
    reasons = list(reversed(data["reasons"]))
    fig = go.Figure(go.Bar(x=[r["searches"] for r in reasons], y=[_plain(r["reason"]) for r in reasons],
                           orientation="h", marker_color="#b0b7c3"))
    fig.update_xaxes(title_text="empty searches", dtick=1)
    return _layout(fig, height=60 + 40 * len(reasons))


# -- review backlog and extraction ---------------------------------------------------------------


def review_backlog_data(service) -> list[dict[str, Any]]:
    """Per scope: provisional records and review-due flags waiting for a person."""
    rows = service.store.query(
        # a subquery, so the outer clauses may name the counts (PostgreSQL allows no alias in HAVING)
        "SELECT scope, provisional, review_due FROM (SELECT scope_kind || ':' || scope_id AS scope, "
        "SUM(status = 'provisional') AS provisional, SUM(review_flagged_at IS NOT NULL) AS review_due "
        "FROM records WHERE status != 'deleted' GROUP BY scope_kind, scope_id) q "
        "WHERE provisional > 0 OR review_due > 0 ORDER BY provisional + review_due DESC, scope")
    return [dict(r) for r in rows]


def review_backlog_figure(rows: list[dict[str, Any]]) -> go.Figure:
    if not rows:
        return empty_figure("Nothing waits for review")
    scopes = [_plain(r["scope"]) for r in rows]
    fig = go.Figure([go.Bar(x=scopes, y=[r["provisional"] for r in rows], name="provisional", marker_color="#f4a261"),
                     go.Bar(x=scopes, y=[r["review_due"] for r in rows], name="review due", marker_color="#e76f51")])
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="records", dtick=1)
    return _layout(fig)


def extraction_outcomes_data(service) -> dict[str, list[dict[str, Any]]]:
    """Runs by status, and the candidates of each run's latest attempt by what became of them."""
    runs = service.store.query("SELECT status, COUNT(*) AS n FROM extraction_runs GROUP BY status ORDER BY status")
    candidates = service.store.query(
        "SELECT COALESCE(c.outcome, c.verdict, 'pending') AS outcome, COUNT(*) AS n FROM extraction_candidates c "
        "JOIN extraction_runs r ON r.id = c.run_id AND c.attempt = r.attempts GROUP BY 1 ORDER BY 2 DESC")
    return {"runs": [dict(r) for r in runs], "candidates": [dict(r) for r in candidates]}


def extraction_outcomes_figure(data: dict[str, list[dict[str, Any]]]) -> go.Figure:
    if not data["runs"]:
        return empty_figure("No extraction runs yet")
    fig = go.Figure([
        go.Bar(x=[_plain(r["status"]) for r in data["runs"]], y=[r["n"] for r in data["runs"]], name="runs",
               marker_color="#3b6fb6"),
        go.Bar(x=[_plain(c["outcome"]) for c in data["candidates"]], y=[c["n"] for c in data["candidates"]],
               name="candidates", marker_color="#2a9d8f"),
    ])
    fig.update_yaxes(title_text="count")
    return _layout(fig)
