"""The forms that write a memory and edit one (Records / My memory); the rules are in ``data/memory_entry``."""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data import memory_entry
from .widgets import clear_selection, flash, md_escape, reset_fields, show_error

SOURCE_NOTES = {
    "user_statement": "It is saved as your own statement (user_statement, confirmed), as if you had said it to an agent.",
    "system": "It is saved as a staff statement (system, confirmed): it ranks below the user's own words, so it never "
              "replaces what the user said, and a contradiction with it is flagged for review.",
}


def _open(record_id: str, selection_key: str | None) -> None:
    """Open ``record_id`` in the detail pane on the next run (its permalink), whatever page the list is on."""
    if selection_key:
        st.session_state.pop(selection_key, None)
    st.query_params["record"] = record_id


def _outcome_message(verb: str, out) -> str:
    text = f"{verb} {out.record.id} ({out.record.source_kind}, {out.record.status}): {out.summary}"
    if out.flagged_for_review:
        text += ". It contradicts a record and is flagged for review"
    return text


def render_write_form(service, identity: Identity, users: list[str], key: str = "memory_write",
                      selection_key: str | None = None) -> None:
    """A toggle that opens the form that writes a new memory (nothing for a role that may not write)."""
    if not identity.can("write_memory"):
        return
    as_user = identity.role == "user"
    # A toggle, not an expander: its state is the session's, so the form stays open to show what was wrong.
    label = "Write a memory about yourself" if as_user else "Write a memory for a user"
    if not st.toggle(label, key=f"{key}_open"):
        return
    with st.container(border=True):
        st.caption(md_escape(SOURCE_NOTES[memory_entry.source_for(identity)] + " It goes through the same checks as an "
                             "agent's memory_write: the same fact twice is one record, reinforced."))
        with st.form(f"{key}_form"):
            user_id = None
            if not as_user:
                user_id = st.selectbox("User", users, index=None, accept_new_options=True, key=f"{key}_user",
                                       placeholder="Choose or type a user id")
            kind = st.selectbox("Type", memory_entry.ENTRY_TYPES, key=f"{key}_type",
                                format_func=lambda t: {"semantic": "semantic: a fact or preference",
                                                       "episodic": "episodic: something that happened"}[t])
            content = st.text_area("Memory", key=f"{key}_content", placeholder="I prefer short answers with examples.")
            attribute = st.text_input("Attribute (optional, e.g. 'answer style')", key=f"{key}_attribute")
            label = "Reason (optional, kept in the audit log)" if as_user else "Reason (kept in the audit log)"
            reason = st.text_input(label, key=f"{key}_reason")
            submitted = st.form_submit_button("Save memory", key=f"{key}_submit", type="primary")
        if submitted:
            try:
                out = memory_entry.write_memory(service, identity, user_id=user_id, content=content, reason=reason,
                                                type=kind, attribute=attribute)
            except Exception as exc:  # noqa: BLE001 - the core's refusal is shown as it is; nothing was written
                show_error(exc)
            else:
                flash(_outcome_message("Saved", out))
                reset_fields(f"{key}_content", f"{key}_attribute", f"{key}_reason", f"{key}_open")
                _open(out.record.id, selection_key)
                st.rerun()


def render_revise_form(service, identity: Identity, record, key: str, selection_key: str | None = None,
                       table_key: str | None = None) -> None:
    """A toggle that opens the form that writes a new version of ``record`` (only where the role may).

    After a revise the new version opens, and the tick in table ``table_key`` is cleared: it sat on
    the row of the version that is now superseded."""
    if not memory_entry.can_revise(identity, record):
        return
    if not st.toggle("Edit this record", key=f"{key}_revise_open"):
        return
    with st.container(border=True):
        st.caption(md_escape("Saves a new version with your text as its content and evidence; this version becomes "
                             "superseded and stays in Lineage and History. "
                             + SOURCE_NOTES[memory_entry.source_for(identity)]))
        with st.form(f"{key}_revise_form"):
            content = st.text_area("New content", value=record.content, key=f"{key}_revise_content_{record.id}")
            label = "Reason (optional, kept in the audit log)" if identity.role == "user" else "Reason (kept in the audit log)"
            reason = st.text_input(label, key=f"{key}_revise_reason")
            submitted = st.form_submit_button("Save new version", key=f"{key}_revise_submit", type="primary")
        if submitted:
            try:
                out = memory_entry.revise_memory(service, identity, record.id, content, reason)
            except Exception as exc:  # noqa: BLE001 - shown to the person; nothing was written
                show_error(exc)
            else:
                flash(_outcome_message(f"Revised {record.id}: saved", out))
                reset_fields(f"{key}_revise_reason", f"{key}_revise_open")
                if table_key:
                    clear_selection(table_key, *([selection_key] if selection_key else []))
                _open(out.record.id, selection_key)
                st.rerun()
