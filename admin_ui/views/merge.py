"""The merge preview an operator approves: exactly what the core would change."""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data import actions
from ..data.entities import merge_preview
from .widgets import check_reason, flash, md_escape, read_only_note, reason_fields, reset_fields, show_error, table


def render_merge(service, identity: Identity, source_id: str, target_id: str, key: str) -> None:
    """Preview merging ``source_id`` into ``target_id``; an operator may approve it with a reason."""
    try:
        preview, tables = merge_preview(service, source_id, target_id)
    except Exception as exc:  # noqa: BLE001 - e.g. the core refusing a cross-scope merge
        show_error(exc)
        return
    source, target = preview["source"], preview["target"]
    st.text(f"Merge {source['canonical_name']} ({source_id}) into {target['canonical_name']} ({target_id}) "
            f"in {source['scope_kind']}:{source['scope_id']}")
    st.caption(md_escape(f"{len(tables['relinked'])} record link(s) move to the target"))
    table(tables["relinked"], key=f"{key}_relinked", empty="No record links move.")
    st.caption(md_escape(f"{len(tables['subjects'])} subject(s) rewritten"))
    table(tables["subjects"], key=f"{key}_subjects", empty="No record has this entity as its subject.")
    st.caption("Aliases that move to the target")
    table(tables["aliases"], key=f"{key}_aliases", empty="No new aliases (the target already has them all).")
    if tables["collisions"]:
        st.warning("After the merge these live records share a subject; they will be marked as conflicting, not superseded.")
        table(tables["collisions"], key=f"{key}_collisions")
    st.caption("The source becomes 'merged' and points at the target; an entity.merged event records it.")
    if not identity.can("merge"):
        read_only_note(identity, "approve merges")
        return
    with st.form(f"{key}_form"):
        reason, ok = reason_fields(key, destructive=True, confirm_text="Merge these two entities (cannot be undone here)")
        submitted = st.form_submit_button("Approve merge", key=f"{key}_submit", type="primary")
    if submitted and check_reason(reason, ok):
        try:
            applied = actions.merge_entities(service, identity, source_id, target_id, reason)
        except Exception as exc:  # noqa: BLE001
            show_error(exc)
        else:
            flash(f"Merged {source_id} into {target_id}: {len(applied['relinked_records'])} record link(s) moved")
            st.session_state.pop("entities_proposal", None)
            reset_fields(f"{key}_reason", f"{key}_confirm")
            st.rerun()
