"""How the explorer shows one search: the empty reason first, results with explanations, the
stages one at a time, and the charts."""

from __future__ import annotations

import streamlit as st

from memory_core import charts

from ..auth.accounts import Identity
from ..data import search
from ..data.records import open_record
from . import search_charts
from .record import render_record
from .timefmt import show_time
from .widgets import content_block, labeller, md_escape, show_error, table


def _step(delta: int, count: int) -> None:
    current = int(st.session_state.get("explorer_stage", 1))
    st.session_state["explorer_stage"] = min(max(1, current + delta), count)


def _jump(number: int) -> None:
    st.session_state["explorer_stage"] = number
    st.session_state["explorer_tabs"] = "Stages"


def _prefill(fields: dict) -> None:
    """Put a logged search's request into the form (a callback: widgets may be set before they are drawn)."""
    for name, value in fields.items():
        st.session_state[name] = value
    st.session_state["explorer_edit_note"] = True


def render_stage_stepper(response, contents: dict[str, str] | None = None) -> None:
    """One stage at a time: what it took in, what it produced, what it dropped and why, its time."""
    stages = response.trace.stages
    if not stages:
        st.info("This search has no stage trace.")
        return
    count = len(stages)
    if int(st.session_state.get("explorer_stage", 1)) > count:
        st.session_state["explorer_stage"] = count
    c1, c2, c3 = st.columns([1, 1, 4])
    c1.button("◀ Previous stage", key="explorer_prev", on_click=_step, args=(-1, count))
    c2.button("Next stage ▶", key="explorer_next", on_click=_step, args=(1, count))
    index = c3.number_input("Stage", min_value=1, max_value=count, step=1, key="explorer_stage")
    stage = stages[int(index) - 1]
    with st.container(border=True, key="explorer_stage_panel"):
        st.text(f"Stage {int(index)} of {count}: {stage.name} · {stage.status} · {stage.ms:.2f} ms")
        decision = (stage.outputs or {}).get("decision") if stage.name == "gate" else None
        if decision:  # the gate judges the result set; say what it decided before the details
            st.text(f"Gate decision: {decision}")
            if (stage.outputs or {}).get("unknown_names"):
                st.text("Names in the query that no readable record holds: " + ", ".join(stage.outputs["unknown_names"]))
            line = search.known_name_line(stage.outputs or {})
            if line:
                st.text(line)
        for note in stage.notes:
            st.text(note)
        left, right = st.columns(2)
        contents = contents or {}
        with left:
            st.caption("Inputs")
            st.json(stage.inputs or {}, expanded=True)
        with right:
            st.caption("Outputs (each record's content added beside its id)")
            st.json(search.with_content(stage.outputs or {}, contents), expanded=True)
        left = (stage.outputs or {}).get("readable_records")
        if left is not None:  # a filter stage: it limits what may become a candidate, before any exists
            removed = (stage.outputs or {}).get("removed")
            st.text(f"Readable records left: {left}" + (f" (the window removed {removed})" if removed else ""))
        st.caption(md_escape(f"Candidates dropped here: {len(stage.dropped)}"))
        if not stage.dropped:
            st.info("No candidate existed yet: this stage decides which records the generators may read."
                    if left is not None else "This stage dropped nothing.")
        for n, d in enumerate(stage.dropped):
            # In full, as text: the reason and the content are what an engineer reads here.
            with st.container(border=True, key=f"explorer_dropped_{n}"):
                st.text(f"{d.get('id')} · {d.get('reason')}")
                content_block(contents.get(d.get("id"), "(content not available)"))


def render_response(service, identity: Identity, response) -> None:
    """The whole answer to one search."""
    req = response.request
    st.text(f"{response.search_id} · {show_time(response.at)} · agent {req.agent_id} acting for {req.user_id} · "
            f"{response.total_ms:.1f} ms")
    st.text(f"Query: {req.query}")
    as_of = search.as_of_line(response)
    if as_of:
        st.text(as_of)
    if response.explanation.rewritten_query:
        st.text(f"Rewritten: {response.explanation.rewritten_query} ({response.explanation.rewrite_status})")
    c0, c1, c2 = st.columns([2, 3, 1])
    c0.button("Edit and re-run", key="explorer_edit", on_click=_prefill, args=(search.request_fields(response),),
              help="Put this search's agent, user, query and filters into the form above to change and run again.")
    if getattr(response, "from_log", False):
        c1.caption("Opened from the search log: this is what happened then. Replay runs the same request now.")
        if c2.button("Replay now", key="explorer_replay"):
            try:
                replayed = search.replay_search(service, response.search_id)
            except Exception as exc:  # noqa: BLE001
                show_error(exc)
            else:
                st.session_state["explorer_response"] = replayed
                st.session_state["explorer_stage"] = 1
                st.rerun()

    headline = search.empty_headline(response)
    if headline:
        # An empty answer is a normal outcome, so it is shown in a neutral box, not as an error.
        with st.container(border=True, key="explorer_empty_reason"):
            st.markdown(f":material/search_off: {md_escape(headline)}")
            summary = response.explanation.summary
            if summary and (response.empty_reason or "") not in summary:
                st.text(summary)
            number = search.dropping_stage(response)
            if number:
                name = response.trace.stages[number - 1].name
                st.button(f"Show the stage that dropped everything: {number}. {name}", key="explorer_jump",
                          on_click=_jump, args=(number,))
            window = search.window_stage(response)
            if window and window[0] != number:
                st.button(f"Show the time window, which removed {window[1]} readable record(s): {window[0]}. time_window",
                          key="explorer_jump_window", on_click=_jump, args=(window[0],))
    else:
        st.success(md_escape(f"{len(response.results)} result(s). {response.explanation.summary}"))

    st.caption("Scopes this principal can read (the search looked nowhere else)")
    table(search.scope_rows(response), key="explorer_scopes", empty="No readable scopes.")

    contents = search.contents_of(service, response)
    tab_results, tab_stages, tab_charts = st.tabs(["Results", "Stages", "Charts"], key="explorer_tabs",
                                                  on_change="rerun")
    with tab_results:
        _results(service, identity, response)
    with tab_stages:
        table(search.stage_rows(response), key="explorer_stage_table")
        render_stage_stepper(response, contents)
    with tab_charts:
        rows = search.generator_rows(response)
        st.plotly_chart(charts.generator_ranks_figure(rows, "rank"), key="explorer_chart_ranks")
        st.caption("Each generator scores on its own scale, so cosine and the lexical score have separate axes; bars are "
                   "labelled with the start of each record's content (its id on hover).")
        st.plotly_chart(search_charts.scores_figure(rows, contents), key="explorer_chart_scores")
        st.plotly_chart(charts.stage_latency_figure(response.trace.work_timings()), key="explorer_chart_latency")


def _results(service, identity: Identity, response) -> None:
    if not response.results:
        st.info("Nothing was returned; the Stages tab shows where each candidate was dropped and why.")
        return
    table(search.result_rows(response), key="explorer_results")
    labels = {r.record_id: f"#{r.explanation.rank} {r.record_id}" for r in response.results}
    chosen = st.selectbox("Explain a result", list(labels), index=None, format_func=labeller(labels),
                          key="explorer_result", placeholder="Choose a result")
    if chosen:
        result = next(r for r in response.results if r.record_id == chosen)
        content_block(result.content)
        st.json(result.explanation.to_dict(), expanded=True)
        try:
            record = open_record(service, chosen)
        except Exception:  # noqa: BLE001 - forgotten since the search ran
            st.warning("This record no longer exists.")
        else:
            with st.expander("The record in full"):
                render_record(service, identity, record, key="explorer_record", allow_forget=False)
