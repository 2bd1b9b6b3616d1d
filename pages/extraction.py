"""Extraction: pick an ended session (or upload a transcript), run extraction, watch it, inspect candidates."""

import streamlit as st

from memory_core import charts

from admin_ui.auth.signin import require_identity
from admin_ui.data import extraction
from admin_ui.data import records
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.session import render_candidate, render_session
from admin_ui.views.widgets import (
    clicked_row, empty_state, flash, md_escape, page_number, pager, permalink, read_only_note, show_error, show_flash,
    table,
)

identity = require_identity()
service = get_service()
page_size = get_settings().ui.page_size
st.title("Extraction")
show_flash()
can_run = identity.can("extract")


def _watch(label: str, fn) -> None:
    """Run ``fn(progress)`` inside a status box that lists each stage as it is reported."""
    with st.status(label, expanded=True) as box:
        def progress(message, *rest) -> None:
            st.text(str(message) if not rest else f"{message} {' '.join(str(r) for r in rest)}")

        try:
            result = fn(progress)
        except Exception as exc:  # noqa: BLE001
            box.update(label="Extraction failed", state="error")
            show_error(exc)
            return
        box.update(label=f"Run {result.run['id']}: {result.status}",
                   state="complete" if result.status == "succeeded" else "error")
    st.session_state["extraction_open_run"] = result.run["id"]
    flash(f"Run {result.run['id']} {result.status}", "success" if result.status == "succeeded" else "warning")
    st.rerun()


if not can_run:
    read_only_note(identity, "trigger extraction")

st.subheader("Ended sessions")
agents, users = records.known_agents(service), records.known_users(service)
c1, c2 = st.columns(2)
s_agent = c1.selectbox("Agent", ["", *agents], key="extraction_sessions_agent") or None
s_user = c2.selectbox("User", ["", *users], key="extraction_sessions_user") or None
sessions = extraction.ended_sessions(service, s_agent, s_user, page_number("extraction_sessions", (s_agent, s_user)), page_size)
if not sessions.total:
    empty_state("No ended sessions yet.", "Sessions end when a host signals session_ended; upload a transcript below to add one.")
else:
    st.caption("Click a session to read its transcript; the address bar then links to it.")
    picked = table(sessions.items, key="extraction_sessions_table", select="single", csv=True)
    pager("extraction_sessions", sessions, "sessions")
    ids = [s["session_id"] for s in sessions.items]
    clicked = clicked_row("extraction_sessions_table", picked)
    if clicked is not None and clicked < len(ids):
        st.session_state["extraction_open_session"] = ids[clicked]
        if can_run:
            st.session_state["extraction_session"] = ids[clicked]
    if can_run:
        chosen = st.selectbox("Session to extract", ids, index=None, key="extraction_session", placeholder="Choose a session")
        if st.button("Run extraction", key="extraction_trigger", type="primary", disabled=not chosen):
            _watch(f"Extracting {chosen}…", lambda progress: extraction.trigger(service, identity, chosen, progress))

open_session = st.session_state.get("extraction_open_session") or st.query_params.get("session")
permalink("session", open_session)
if open_session:
    render_session(service, open_session, key="extraction_session_view")

if can_run and st.toggle("Add a transcript: paste or upload one, then extract it", key="extraction_add_open"):
    with st.container(border=True):
        st.caption("Text lines 'role: content' (a line without a role continues the turn above; '[2026-03-02 09:15] "
                   "user: …' gives a turn its time), JSON (a list of {role, content, at?} or {\"turns\": [...]}) or "
                   "JSON lines. It is recorded as an ended session of the chosen agent and user, then extracted.")
        u1, u2, u3 = st.columns(3)
        up_agent = u1.selectbox("Agent", agents, index=None, accept_new_options=True, key="extraction_upload_agent")
        up_user = u2.selectbox("User", users, index=None, accept_new_options=True, key="extraction_upload_user")
        up_project = u3.text_input("Project (optional)", key="extraction_upload_project")
        source = st.radio("Transcript", ["Paste", "Upload a file"], horizontal=True, key="extraction_add_source")
        if source == "Paste":
            pasted = st.text_area("Transcript text", key="extraction_paste_text", height=180,
                                  placeholder="user: I'm flying to Tokyo next Tuesday.\nassistant: Have a good trip!")
            data, name = (pasted.encode("utf-8"), "pasted") if pasted.strip() else (None, "")
        else:
            upload = st.file_uploader("Transcript file", type=["json", "jsonl", "txt"], key="extraction_upload_file")
            data, name = (upload.getvalue(), upload.name) if upload is not None else (None, "")
        when = st.text_input("When the conversation happened (optional): YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC",
                             key="extraction_add_when", placeholder="2026-03-02 09:15",
                             help="Turns without their own time get this one, so 'next Tuesday' means the Tuesday "
                             "after that day (a day alone means noon UTC). Without it, they get the upload time.")
        turns, reference = None, extraction.reference_time(when)
        if data is not None:
            try:
                turns = extraction.parse_transcript(data, name)
                st.info(md_escape(f"{len(turns)} turns read. " + extraction.time_basis(service, turns, reference)))
            except Exception as exc:  # noqa: BLE001 - a transcript that cannot be read, or a time in the future
                show_error(exc)
                turns = None
        if st.button("Record and extract", key="extraction_upload_run", disabled=turns is None):
            if not (up_agent and up_user):
                st.error("Choose the agent and the user the transcript belongs to.")
            else:
                flash(extraction.time_basis(service, turns, reference), "info")
                _watch(f"Recording and extracting the transcript ({len(turns)} turns)…",
                       lambda progress: extraction.extract_upload(service, identity, up_agent, up_user, turns,
                                                                  up_project.strip(), progress, reference_time=reference))

st.subheader("Runs")
statuses = records.distinct_values(service, "status", "extraction_runs")
r_status = st.selectbox("Status", ["", *statuses], key="extraction_runs_status") or None
run_page = extraction.runs(service, r_status, None, page_number("extraction_runs", r_status), page_size)
failed = extraction.failed_count(service)
if failed and r_status != "failed":
    st.warning(f"{failed} failed run(s): choose status 'failed' to list them; open one to read why it failed and retry it.")
if not run_page.total:
    empty_state("No extraction runs yet." if not r_status else "No run has this status.")
    st.stop()
st.caption("Click a run to open it; the address bar then links to it.")
picked = table(run_page.items, key="extraction_runs_table", select="single", csv=True)
pager("extraction_runs", run_page, "runs")
run_ids = [r["id"] for r in run_page.items]
clicked = clicked_row("extraction_runs_table", picked)
opened = st.session_state.pop("extraction_open_run", None)  # the run just triggered
if clicked is not None and clicked < len(run_ids):
    opened = run_ids[clicked]
if opened and opened in run_ids:
    st.session_state["extraction_run"] = opened
if st.session_state.get("extraction_run") not in run_ids:
    st.session_state.pop("extraction_run", None)
st.selectbox("Open a run", run_ids, index=None, key="extraction_run", placeholder="Choose a run")
run_id = st.session_state.get("extraction_run") or opened or st.query_params.get("run")
permalink("run", run_id)
detail = None
if run_id:
    try:
        detail = extraction.run_detail(service, run_id)
    except Exception as exc:  # noqa: BLE001 - a stale or mistyped link
        show_error(exc)
if detail is not None:
    run = detail.run
    st.text(f"{run['id']} · session {run['session_id']} ({run.get('agent_id')}/{run.get('user_id')}) · {run['status']} · "
            f"attempts {run['attempts']} · trigger {run.get('trigger') or '-'}")
    if run.get("error"):
        st.error(md_escape(run["error"]))
    st.caption("Attempts")
    table(extraction.attempt_rows(detail), key="extraction_attempts_table", empty="Not attempted yet.")
    st.caption(md_escape(f"Candidates of attempt {detail.shown_attempt}" if detail.shown_attempt else "Candidates"))
    candidates = extraction.candidate_rows(detail)
    st.caption("Click a candidate to read its content, evidence, verdict and outcome in full.")
    picked_candidate = table(candidates, key="extraction_candidates_table", select="single",
                             empty="This run has no candidates (yet).")
    if picked_candidate and picked_candidate[0] < len(candidates):
        render_candidate(candidates[picked_candidate[0]])
    stages = (detail.attempts[-1].get("stages") if detail.attempts else None) or {}
    if stages:
        st.plotly_chart(charts.stage_latency_figure(stages, "Extraction stages"), key="extraction_stage_chart")
    retryable = extraction.can_retry(run)
    if retryable and can_run:
        label = "Retry this run" if run["status"] == "failed" else "Retry now (do not wait for the next attempt)"
        if st.button(label, key="extraction_retry"):
            _watch(f"Retrying {run_id}…", lambda progress: extraction.retry(service, identity, run_id, progress))
    elif retryable:
        st.caption("Failed runs, and runs waiting for their next attempt, can be retried by an operator.")
