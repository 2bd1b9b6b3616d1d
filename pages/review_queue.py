"""Review queue: provisional records and review-due flags, decided one by one or in bulk."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import overview, records
from admin_ui.data.ambient import ambient_candidates
from admin_ui.data.records import RECORD_TYPES
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.ambient import render_ambient_review
from admin_ui.views.record import render_record
from admin_ui.views.review import QUEUES, bulk_form, decision_forms
from admin_ui.views.widgets import (
    clicked_row, empty_state, labeller, page_number, pager, read_only_note, show_flash, table,
)

identity = require_identity()
service = get_service()
st.title("Review queue")
show_flash()

sizes = overview.review_queue_sizes(service)
sizes["ambient"] = len(ambient_candidates(service))
names = {**QUEUES, "ambient": "Ambient candidates"}
queue = st.segmented_control(
    "Queue", list(names), format_func=lambda q: f"{names[q]} ({sizes[q]})", default="provisional", key="review_queue",
) or "provisional"
if queue == "ambient":
    render_ambient_review(service, identity)
    st.stop()

c1, c2, c3 = st.columns(3)
scope = c1.selectbox("Scope", ["(any)", *records.known_scopes(service)], key="review_scope")
types = c2.multiselect("Type", RECORD_TYPES, key="review_types")
text = c3.text_input("Text or record id", key="review_text")
flt = records.RecordFilter(scope=None if scope == "(any)" else scope, types=types, text=text,
                           statuses=["provisional"] if queue == "provisional" else [], review_due=queue == "review_due")
page = records.list_records(service, flt, page_number("review", (queue, flt)), get_settings().ui.page_size,
                            oldest_first=True)

if page.total == 0:
    empty_state("Nothing waits in this queue." if flt.scope is None and not types and not text
                else "No record in this queue matches the filters.",
                "Provisional records appear when an agent or the extractor infers something; review-due flags "
                "appear when a record's review date passes and the maintenance pass runs.")
    st.stop()

st.caption("Click a row to decide on that record.")
picked = table(records.record_rows(page.items), key="review_table", select="single", csv=True)
pager("review", page, "records")
labels = {r.id: f"{r.id} · {r.content[:80]}" for r in page.items}
clicked = clicked_row("review_table", picked)
if clicked is not None and clicked < len(page.items):
    st.session_state["review_selected"] = page.items[clicked].id

if identity.can("review"):
    with st.expander("Bulk action"):
        if "review_bulk_ids" in st.session_state:
            st.session_state["review_bulk_ids"] = [i for i in st.session_state["review_bulk_ids"] if i in labels]
        st.button("Select every record on this page", key="review_bulk_all",
                  on_click=lambda: st.session_state.update(review_bulk_ids=list(labels)))
        chosen = st.multiselect("Records", list(labels), format_func=labeller(labels),
                                key="review_bulk_ids")
        bulk_form(service, identity, queue, chosen, "review_bulk_ids")
else:
    read_only_note(identity, "decide on records")

selected = st.selectbox("Decide on one record", list(labels), index=None, format_func=labeller(labels),
                        key="review_selected", placeholder="Choose a record on this page")
if selected:
    record = records.open_record(service, selected)
    st.divider()
    decision_forms(service, identity, record, queue, "review_selected")
    with st.expander("The record in full", expanded=False):
        render_record(service, identity, record, key="review_detail", allow_forget=False)
