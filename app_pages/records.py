"""Records: filter and browse every record (or, for the user role, the user's own), open one in full."""

import streamlit as st

from admin_ui import queries
from admin_ui.record_view import render_record
from admin_ui.runtime import get_service, get_settings
from admin_ui.signin import require_identity
from admin_ui.widgets import labeller, empty_state, md_escape, page_number, pager, show_flash, table

from memory_core.store.records import RECORD_TYPES, STATUSES

identity = require_identity()
service = get_service()
user_mode = identity.role == "user"
owner = identity.user_id if user_mode else None

st.title("My memory" if user_mode else "Records")
show_flash()
if user_mode:
    st.caption(md_escape(f"Everything stored in scopes you own: user:{owner} and each agent's private "
                         f"agent:<agent>/{owner} scope. Open a record to see why it is remembered, or forget it."))

with st.container(border=True):
    c1, c2, c3, c4 = st.columns(4)
    scope = c1.selectbox("Scope", ["(any)", *queries.known_scopes(service, owner)], key="records_scope")
    types = c2.multiselect("Type", RECORD_TYPES, key="records_types")
    statuses = c3.multiselect("Status", STATUSES, key="records_statuses",
                              help="Empty means every status except forgotten tombstones.")
    sources = c4.multiselect("Source", queries.distinct_values(service, "source_kind"), key="records_sources")
    c5, c6, c7, c8 = st.columns([2, 2, 1, 1])
    text = c5.text_input("Text or record id", key="records_text")
    entity = c6.text_input("Entity id", key="records_entity", help="Records linked to this entity (see Entities).")
    review_due = c7.checkbox("Review due only", key="records_review_due")
    include_deleted = c8.checkbox("Show forgotten", key="records_include_deleted")

flt = queries.RecordFilter(
    scope=None if scope == "(any)" else scope, types=types, statuses=statuses, source_kinds=sources,
    entity_id=entity.strip() or None, text=text, review_due=review_due, owner_user_id=owner,
    include_deleted=include_deleted,
)
page_size = get_settings().ui.page_size
page = queries.list_records(service, flt, page_number("records", flt), page_size)

if page.total == 0:
    if user_mode and flt == queries.RecordFilter(owner_user_id=owner):
        empty_state("Nothing is remembered about you yet.")
    else:
        empty_state("No record matches these filters.", "Clear a filter, or tick 'Show forgotten' to include tombstones.")
else:
    table(queries.record_rows(page.items), key="records_table")
    pager("records", page, "records")
    options = [r.id for r in page.items]
    labels = {r.id: f"{r.id} · {r.status} · {r.content[:80]}" for r in page.items}
    chosen = st.selectbox("Open a record", options, index=None, format_func=labeller(labels),
                          key="records_selected", placeholder="Choose a record on this page")
    if chosen:
        st.divider()
        render_record(service, identity, service.record(chosen), key="records_detail", selection_key="records_selected")
