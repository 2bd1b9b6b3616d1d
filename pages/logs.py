"""Logs: the search log, write log and event log, filtered, with any entry opened in full."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import logs, records
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.navigation import page_path
from admin_ui.views.widgets import clicked_row, empty_state, page_number, pager, show_flash, table

LOGS = {"search": "Search log", "write": "Write log", "event": "Event log"}

identity = require_identity()
service = get_service()
page_size = get_settings().ui.page_size
st.title("Logs")
show_flash()

which = st.segmented_control("Log", list(LOGS), format_func=LOGS.get, default="search", key="logs_kind") or "search"
flt = logs.LogFilter()
d1, d2 = st.columns(2)
since = d1.date_input("From", value=None, key=f"logs_{which}_since")
until = d2.date_input("Until (exclusive)", value=None, key=f"logs_{which}_until")
flt.since = since.isoformat() if since else None
flt.until = until.isoformat() if until else None
c1, c2, c3, c4 = st.columns(4)
if which == "search":
    flt.agent_id = c1.selectbox("Agent", ["", *records.known_agents(service)], key="logs_search_agent") or None
    flt.user_id = c2.selectbox("User", ["", *records.known_users(service)], key="logs_search_user") or None
    flt.text = c3.text_input("Query text or search id", key="logs_search_text")
    flt.empty_only = c4.checkbox("Empty results only", key="logs_search_empty")
    page = logs.search_log(service, flt, page_number("logs_search", flt), page_size)
    table_name = "search_log"
elif which == "write":
    flt.kind = c1.text_input("Operation contains", key="logs_write_operation")
    flt.outcome = c2.selectbox("Outcome", ["", *records.distinct_values(service, "outcome", "write_log")],
                               key="logs_write_outcome") or None
    flt.agent_id = c3.selectbox("Agent", ["", *records.known_agents(service)], key="logs_write_agent") or None
    flt.record_id = c4.text_input("Record id", key="logs_write_record").strip() or None
    page = logs.write_log(service, flt, page_number("logs_write", flt), page_size)
    table_name = "write_log"
else:
    flt.kind = c1.selectbox("Kind", ["", *records.distinct_values(service, "kind", "events")], key="logs_event_kind") or None
    flt.actor = c2.selectbox("Actor", ["", *records.distinct_values(service, "actor", "events")], key="logs_event_actor") or None
    flt.record_id = c3.text_input("Record or entity id", key="logs_event_record").strip() or None
    flt.text = c4.text_input("Text contains", key="logs_event_text",
                             help="Matches the event's kind, actor, record and entity ids, and reason.")
    page = logs.event_log(service, flt, page_number("logs_event", flt), page_size)
    table_name = "events"

if not page.total:
    empty_state("No entries match these filters." if any(vars(flt).values()) else "This log is empty.")
    st.stop()
st.caption("Click an entry to open it in full.")
picked = table(page.items, key=f"logs_{which}_table", select="single", csv=True)
pager(f"logs_{which}", page, "entries")

seqs = [row["seq"] for row in page.items]
clicked = clicked_row(f"logs_{which}_table", picked)
if clicked is not None and clicked < len(seqs):
    st.session_state[f"logs_{which}_selected"] = seqs[clicked]
chosen = st.selectbox("Open an entry", seqs, index=None, key=f"logs_{which}_selected", placeholder="Choose an entry (seq)")
if chosen is not None:
    entry = logs.log_entry(service, table_name, chosen)
    if which == "search" and entry:
        if st.button("Open in the search explorer", key="logs_open_in_explorer"):
            st.switch_page(page_path("search_explorer.py"), query_params={"search": entry["id"]})
    st.json(entry, expanded=True)
