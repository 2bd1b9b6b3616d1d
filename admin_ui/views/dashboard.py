"""The overview's dashboard: five plotly charts, each with a sentence saying how to read it.

The series come from :mod:`admin_ui.data.overview`; each ``*_figure`` draws one. Labels are ids,
kinds and reason classes, never memory content, and every label is passed through as plain text
(plotly does not render it as HTML here because ``_plain`` escapes ``<`` and ``>``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from memory_core.charts import empty_figure

from ..data import overview
from .widgets import md_escape


def _plain(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _layout(fig: go.Figure, height: int = 320) -> go.Figure:
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=-0.3))
    return fig


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


def _wrap(text: str, width: int = 24) -> str:
    """A label broken into lines of about ``width`` characters (plotly's ``<br>``), escaped first."""
    lines, line = [], ""
    for word in str(text).split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "<br>".join(_plain(part) for part in lines)


def empty_reasons_figure(data: dict[str, Any]) -> go.Figure:
    """One bar per kind of empty answer, its count written on the bar; short wrapped labels with room
    made for them (automargin), a whole-number axis with few ticks, the full example reason on hover."""
    if not data["reasons"]:
        return empty_figure("No empty answers")
    reasons = list(reversed(data["reasons"]))
    labels = [_wrap(r["reason"]) for r in reasons]
    fig = go.Figure(go.Bar(x=[r["searches"] for r in reasons], y=labels, orientation="h", marker_color="#b0b7c3",
                           text=[r["searches"] for r in reasons], textposition="auto",
                           hovertext=[_plain(f"{r['searches']} × e.g. {r.get('example', r['reason'])[:160]}") for r in reasons],
                           hoverinfo="text"))
    fig.update_xaxes(title_text="empty searches", tickformat="d", rangemode="tozero", nticks=6)
    fig.update_yaxes(automargin=True, tickfont=dict(size=11))
    lines = sum(label.count("<br>") + 1 for label in labels)
    return _layout(fig, height=max(220, 80 + 26 * lines + 14 * len(labels)))


def review_backlog_figure(rows: list[dict[str, Any]]) -> go.Figure:
    if not rows:
        return empty_figure("Nothing waits for review")
    scopes = [_plain(r["scope"]) for r in rows]
    fig = go.Figure([go.Bar(x=scopes, y=[r["provisional"] for r in rows], name="provisional", marker_color="#f4a261"),
                     go.Bar(x=scopes, y=[r["review_due"] for r in rows], name="review due", marker_color="#e76f51")])
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="records", dtick=1)
    return _layout(fig)


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


def _chart(title: str, figure, caption: str, key: str) -> None:
    with st.container(border=True, key=f"{key}_card"):
        st.markdown(f"**{title}**")
        st.plotly_chart(figure, key=key)
        st.caption(md_escape(caption))


def render_dashboard(service) -> None:
    """Store composition over time, searches per day, empty answers, review backlog, extraction.

    The search charts count the searches agents and people made; the extractor's own related-record
    look-ups (origin ``extraction``) only when the toggle asks for them."""
    include = st.toggle("Include extraction's own searches", key="overview_include_extraction",
                        help="The extractor searches for related records to show its reviewer; those searches are "
                             "not an agent's, so the search charts and rates leave them out unless this is on.")
    composition = overview.composition_over_time_data(service)
    per_day = overview.searches_per_day_data(service, include)
    empties = overview.empty_reasons_data(service, include_extraction=include)
    backlog = overview.review_backlog_data(service)
    extraction = overview.extraction_outcomes_data(service)

    left, right = st.columns(2)
    with left:
        total = sum(r["records"] for r in composition if r["day"] == composition[-1]["day"]) if composition else 0
        _chart("Store composition over time", composition_over_time_figure(composition),
               f"How many live records of each type the store held at the end of each day with writes "
               f"({total} now, forgotten records not counted).", "overview_dash_composition")
    with right:
        busiest = max(per_day, key=lambda r: r["searches"]) if per_day else None
        _chart("Searches per day", searches_per_day_figure(per_day),
               ("Bars: searches each day, grey for those that returned nothing. Lines: the median (p50) and "
                "95th-percentile (p95) time a search took that day, on the right-hand axis."
                + (f" Busiest day: {busiest['day']} with {busiest['searches']}." if busiest else "")),
               "overview_dash_searches")
    left, right = st.columns(2)
    with left:
        rate = f"{empties['rate']:.0%}" if empties["searches"] else "no searches yet"
        who = "extraction's own searches included" if include else "searches by agents and people; extraction's own left out"
        _chart("Empty answers and why", empty_reasons_figure(empties),
               f"{empties['empty']} of {empties['searches']} logged searches returned nothing ({rate}; {who}). An empty "
               f"answer is a normal outcome; the bars group the reasons the pipeline gave by their kind "
               f"(hover a bar for an example).",
               "overview_dash_empty")
    with right:
        waiting = sum(r["provisional"] + r["review_due"] for r in backlog)
        _chart("Review backlog", review_backlog_figure(backlog),
               f"{waiting} record(s) wait for a person, by scope: provisional inferences to confirm or reject, and "
               f"records whose review date has passed. The Review queue page works through them.",
               "overview_dash_backlog")
    runs = sum(r["n"] for r in extraction["runs"])
    _chart("Extraction outcomes", extraction_outcomes_figure(extraction),
           f"{runs} extraction run(s) by status, and what became of the candidates of each run's latest attempt "
           f"(created or reinforced a record, or rejected by the reviewer or the validator).",
           "overview_dash_extraction")
