"""The overview's dashboard: five plotly charts, each with a sentence saying how to read it."""

from __future__ import annotations

import streamlit as st

from . import dashboard
from .widgets import md_escape


def _chart(title: str, figure, caption: str, key: str) -> None:
    with st.container(border=True, key=f"{key}_card"):
        st.markdown(f"**{title}**")
        st.plotly_chart(figure, key=key)
        st.caption(md_escape(caption))


def render_dashboard(service) -> None:
    """Store composition over time, searches per day, empty answers, review backlog, extraction."""
    composition = dashboard.composition_over_time_data(service)
    per_day = dashboard.searches_per_day_data(service)
    empties = dashboard.empty_reasons_data(service)
    backlog = dashboard.review_backlog_data(service)
    extraction = dashboard.extraction_outcomes_data(service)

    left, right = st.columns(2)
    with left:
        total = sum(r["records"] for r in composition if r["day"] == composition[-1]["day"]) if composition else 0
        _chart("Store composition over time", dashboard.composition_over_time_figure(composition),
               f"How many live records of each type the store held at the end of each day with writes "
               f"({total} now, forgotten records not counted).", "overview_dash_composition")
    with right:
        busiest = max(per_day, key=lambda r: r["searches"]) if per_day else None
        _chart("Searches per day", dashboard.searches_per_day_figure(per_day),
               ("Bars: searches each day, grey for those that returned nothing. Lines: the median (p50) and "
                "95th-percentile (p95) time a search took that day, on the right-hand axis."
                + (f" Busiest day: {busiest['day']} with {busiest['searches']}." if busiest else "")),
               "overview_dash_searches")
    left, right = st.columns(2)
    with left:
        rate = f"{empties['rate']:.0%}" if empties["searches"] else "no searches yet"
        _chart("Empty answers and why", dashboard.empty_reasons_figure(empties),
               f"{empties['empty']} of {empties['searches']} logged searches returned nothing ({rate}). An empty "
               f"answer is a normal outcome; the bars group the reasons the pipeline gave, with numbers left out.",
               "overview_dash_empty")
    with right:
        waiting = sum(r["provisional"] + r["review_due"] for r in backlog)
        _chart("Review backlog", dashboard.review_backlog_figure(backlog),
               f"{waiting} record(s) wait for a person, by scope: provisional inferences to confirm or reject, and "
               f"records whose review date has passed. The Review queue page works through them.",
               "overview_dash_backlog")
    runs = sum(r["n"] for r in extraction["runs"])
    _chart("Extraction outcomes", dashboard.extraction_outcomes_figure(extraction),
           f"{runs} extraction run(s) by status, and what became of the candidates of each run's latest attempt "
           f"(created or reinforced a record, or rejected by the reviewer or the validator).",
           "overview_dash_extraction")
