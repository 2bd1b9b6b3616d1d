"""Entities: aliases and linked records, merge proposals with an exact preview, audited approval."""

import streamlit as st

from admin_ui.data import records
from admin_ui.data.entities import (ENTITY_KINDS, EntityFilter, entity, linked_records, list_entities, merge_proposals,
                                    same_alias_elsewhere)
from admin_ui.data.pagination import paginate
from admin_ui.runtime import get_service, get_settings
from admin_ui.auth.signin import require_identity
from admin_ui.views.merge import render_merge
from admin_ui.views.widgets import clicked_row, empty_state, labeller, md_escape, page_number, pager, show_flash, table

identity = require_identity()
service = get_service()
page_size = get_settings().ui.page_size
st.title("Entities")
show_flash()

st.subheader("Merge proposals")
st.caption("Pairs in the same scope that look like one thing: a shared alias, names equal once case and "
           "punctuation are ignored, the same words in another order, one name contained in the other, or names a "
           "character or two apart. Nothing merges until an operator approves, and entities in different scopes "
           "are never proposed.")
proposals = merge_proposals(service)
if not proposals:
    empty_state("No merge proposals: no two entities in one scope look alike.")
else:
    prop_page = paginate(proposals, page_number("proposals"), page_size)
    table([p.row() for p in prop_page.items], key="proposals_table")
    pager("proposals", prop_page, "proposals")
    labels = {p.key: f"{p.source['name']} → {p.target['name']} ({p.source['scope']})" for p in prop_page.items}
    chosen = st.selectbox("Preview a proposal", list(labels), index=None, format_func=labeller(labels),
                          key="entities_proposal", placeholder="Choose a proposal")
    if chosen:
        source_id, target_id = chosen.split("->")
        with st.container(border=True):
            render_merge(service, identity, source_id, target_id, key="merge")

st.subheader("All entities")
c1, c2, c3, c4 = st.columns([2, 1, 2, 1])
scope = c1.selectbox("Scope", ["(any)", *records.known_scopes(service)], key="entities_scope")
kind = c2.selectbox("Kind", ["(any)", *ENTITY_KINDS], key="entities_kind")
text = c3.text_input("Name, alias or id", key="entities_text")
include_merged = c4.checkbox("Show merged", key="entities_include_merged")
flt = EntityFilter(scope=None if scope == "(any)" else scope, kind=None if kind == "(any)" else kind, text=text,
                   include_merged=include_merged)
page = list_entities(service, flt, page_number("entities", flt), page_size)
if not page.total:
    empty_state("No entity matches these filters.")
    st.stop()
picked = table(page.items, key="entities_table", select="single", csv=True)
pager("entities", page, "entities")
clicked = clicked_row("entities_table", picked)
if clicked is not None and clicked < len(page.items):
    st.session_state["entities_selected"] = page.items[clicked]["id"]

labels = {e["id"]: f"{e['name']} · {e['kind']} · {e['scope']} · {e['id']}" for e in page.items}
selected = st.selectbox("Open an entity", list(labels), index=None, format_func=labeller(labels),
                        key="entities_selected", placeholder="Choose an entity on this page")
if selected:
    opened = entity(service, selected)
    st.text(f"{opened['canonical_name']} · {opened['kind']} · {opened['scope']} · {opened['status']}"
            + (f" · merged into {opened['merged_into']}" if opened["merged_into"] else ""))
    st.caption("Aliases")
    table([{"alias": a} for a in opened["aliases"]], key="entity_aliases_table", empty="No aliases.")
    st.caption("Linked records")
    linked = linked_records(service, selected, page_number("entity_records", selected), page_size)
    table(linked.items, key="entity_records_table", empty="No records link to this entity.")
    pager("entity_records", linked, "linked records")
    elsewhere = same_alias_elsewhere(service, selected)
    if elsewhere:
        st.caption(md_escape("Entities in other scopes with a shared alias. They are different owners' "
                             "entities and are never merged."))
        table(elsewhere, key="entity_elsewhere_table")
