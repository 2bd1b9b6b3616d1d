"""Records: filter and browse every record (or, for the user role, the user's own), open one in full."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import actions, records
from admin_ui.data.records import RECORD_STATUSES, RECORD_TYPES
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.download import render_download
from admin_ui.views.memory_entry import render_write_form
from admin_ui.views.record import render_record
from admin_ui.views.who_reads import render_who_reads
from admin_ui.views.widgets import (
    clicked_row, empty_state, labeller, md_escape, page_number, pager, permalink, show_flash, table,
)

from memory_core.errors import NotFoundError

identity = require_identity()
service = get_service()
user_mode = identity.role == "user"
owner = identity.user_id if user_mode else None

st.title("My memory" if user_mode else "Records")
show_flash()
if user_mode:
    st.caption(md_escape(f"Everything stored in scopes you own: user:{owner} and each agent's private "
                         f"agent:<agent>/{owner} scope. Open a record to see why it is remembered, or forget it."))

render_write_form(service, identity, [] if user_mode else records.known_users(service), selection_key="records_selected")

# Facet counts (Datasette style): each option shows how many records picking it would list.
current = records.RecordFilter(
    scope=None if st.session_state.get("records_scope", "(any)") == "(any)" else st.session_state.get("records_scope"),
    types=st.session_state.get("records_types", []), statuses=st.session_state.get("records_statuses", []),
    source_kinds=st.session_state.get("records_sources", []), owner_user_id=owner,
    text=st.session_state.get("records_text"), include_deleted=st.session_state.get("records_include_deleted", False),
    review_due=st.session_state.get("records_review_due", False),
    entity_id=(st.session_state.get("records_entity") or "").strip() or None,
)
facets = {name: records.facet_counts(service, current, name) for name in ("scope", "type", "status", "source_kind")}


def _counted(facet: str):
    return lambda value: value if value == "(any)" else f"{value} ({facets[facet].get(value, 0)})"


with st.container(border=True):
    c1, c2, c3, c4 = st.columns(4)
    scope = c1.selectbox("Scope", ["(any)", *records.known_scopes(service, owner)], key="records_scope",
                         format_func=_counted("scope"))
    types = c2.multiselect("Type", RECORD_TYPES, key="records_types", format_func=_counted("type"))
    statuses = c3.multiselect("Status", RECORD_STATUSES, key="records_statuses", format_func=_counted("status"),
                              help="Empty means every status except forgotten tombstones.")
    sources = c4.multiselect("Source", records.distinct_values(service, "source_kind"), key="records_sources",
                             format_func=_counted("source_kind"))
    c5, c6, c7, c8 = st.columns([2, 2, 1, 1])
    text = c5.text_input("Text or record id", key="records_text")
    entity = c6.text_input("Entity id", key="records_entity", help="Records linked to this entity (see Entities).")
    review_due = c7.checkbox("Review due only", key="records_review_due")
    include_deleted = c8.checkbox("Show forgotten", key="records_include_deleted")

flt = records.RecordFilter(
    scope=None if scope == "(any)" else scope, types=types, statuses=statuses, source_kinds=sources,
    entity_id=entity.strip() or None, text=text, review_due=review_due, owner_user_id=owner,
    include_deleted=include_deleted,
)
page_size = get_settings().ui.page_size
page = records.list_records(service, flt, page_number("records", flt), page_size)

if page.total == 0:
    if user_mode and flt == records.RecordFilter(owner_user_id=owner):
        empty_state("Nothing is remembered about you yet.")
    else:
        empty_state("No record matches these filters.", "Clear a filter, or tick 'Show forgotten' to include tombstones.")
else:
    st.caption("Click a row to open the record; the address bar then links to it.")
    picked = table(records.record_rows(page.items), key="records_table", select="single", csv=True)
    pager("records", page, "records")
    options = [r.id for r in page.items]
    clicked = clicked_row("records_table", picked)
    if clicked is not None and clicked < len(options):
        st.session_state["records_selected"] = options[clicked]
    labels = {r.id: f"{r.id} · {r.status} · {r.content[:80]}" for r in page.items}
    st.selectbox("Open a record", options, index=None, format_func=labeller(labels),
                 key="records_selected", placeholder="Choose a record on this page")

# What is open: the row or option picked here, else the record a permalink names (?record=…).
chosen = st.session_state.get("records_selected") or st.query_params.get("record")
permalink("record", chosen)
if chosen:
    try:
        record = actions.visible_record(service, identity, chosen)
    except NotFoundError:
        st.warning(md_escape(f"No record {chosen} that you can see."))
    else:
        st.divider()
        render_record(service, identity, record, key="records_detail", selection_key="records_selected",
                      table_key="records_table")

st.divider()
render_download(service, identity)
render_who_reads(service, identity)  # the user role only
