"""One record in full: envelope, evidence in its transcript, lineage, conflicts, links, history.

Used by the Records page, the Review queue and the Search explorer. Content is shown as text.
"""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data import actions
from ..data.memory_entry import provenance
from ..data.records import (Record, conflict_rows, entity_link_rows, event_rows, evidence_context, lineage_rows,
                            session_info)
from .memory_entry import render_revise_form
from .timefmt import show_time
from .widgets import check_reason, clear_selection, content_block, flash, md_escape, reason_fields, reset_fields, show_error, table

STATUS_NOTES = {
    "superseded": "Historical: superseded by a newer version; excluded from default retrieval.",
    "expired": "Historical: expired (an unreinforced provisional record); excluded from default retrieval.",
    "deleted": "Forgotten: a tombstone. Its content, evidence and vector have been erased.",
    "provisional": "Provisional: an inference that expires unless reinforced or confirmed.",
}


def status_banner(record: Record) -> None:
    """A banner for historical, forgotten, provisional and review-due records."""
    note = STATUS_NOTES.get(record.status)
    if note is not None:
        kind = st.info if record.status == "provisional" else st.warning
        extra = f" Superseded by {record.superseded_by_id}." if record.superseded_by_id else ""
        kind(md_escape(note + extra))
    if record.review_flagged_at:  # a confirmed record can be due for review too
        st.warning(md_escape(f"Review due since {show_time(record.review_flagged_at)}: {record.review_reason or 'no reason recorded'}"))


def render_record(service, identity: Identity, record: Record, key: str, selection_key: str | None = None,
                  allow_forget: bool = True, table_key: str | None = None) -> None:
    """The full view of ``record`` with a forget action when the identity may use it.

    After a forget, ``selection_key`` (the picker that opened the record) and the tick in table
    ``table_key`` are cleared, so nothing stays open on a record that is now a tombstone.
    """
    st.text(f"{record.id} · {record.type} · version {record.version} · {record.status} · {record.scope}")
    status_banner(record)
    content_block(record.content)
    tabs = st.tabs(["Envelope", "Evidence", "Lineage", "Conflicts", "Entities", "History"])
    with tabs[0]:
        st.json(record.to_dict(), expanded=True)
    with tabs[1]:
        _evidence(service, record, key)
    with tabs[2]:
        table(lineage_rows(service, identity, record), key=f"{key}_lineage", empty="This record has no other versions.")
    with tabs[3]:
        _conflicts(service, identity, record, key)
    with tabs[4]:
        table(entity_link_rows(record), key=f"{key}_links", empty="No entity links.")
    with tabs[5]:
        table(event_rows(service, record.id), key=f"{key}_events", empty="No events for this record.")
    if allow_forget:
        render_revise_form(service, identity, record, key, selection_key, table_key)
        _forget_action(service, identity, record, key, selection_key, table_key)


def _evidence(service, record: Record, key: str) -> None:
    if record.status == "deleted":
        st.caption("Erased with the record.")
        return
    if not record.evidence:
        st.caption(md_escape(f"No evidence quote: source {record.source_kind}, ref {record.source_ref or 'none'}."))
        return
    st.caption(md_escape(provenance(record) or "Evidence quote"))
    content_block(record.evidence)
    if record.evidence_session_id:
        info = session_info(service, record.evidence_session_id) or {}
        st.caption(md_escape(
            f"Session {record.evidence_session_id} (agent {info.get('agent_id', '?')}, user {info.get('user_id', '?')}), "
            f"turn {record.evidence_turn if record.evidence_turn is not None else 'not located'}"))
        turns = evidence_context(service, record)
        if not turns:
            st.info("The quote was not located in a turn.")
        with st.container(key=f"{key}_turns"):
            for t in turns:  # each turn in full, as text
                st.text(f"turn {t['turn']} · {t['role']} · {show_time(t['at'], 'no time')}" + ("  ◀ the evidence" if t["evidence"] else ""))
                content_block(t["content"])


def _conflicts(service, identity: Identity, record: Record, key: str) -> None:
    table(conflict_rows(service, identity, record), key=f"{key}_conflicts", empty="No conflicting records.")


def _forget_action(service, identity: Identity, record: Record, key: str, selection_key: str | None,
                   table_key: str | None) -> None:
    if record.status == "deleted":
        return
    if not identity.can("forget") or not identity.owns_scope(record.scope):
        return
    with st.expander("Forget this record"):
        st.caption("Erases the content, evidence and vector of this record and its earlier versions; "
                   "a tombstone and the audit event remain.")
        try:
            erased = actions.forget_preview(service, identity, record.id)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            show_error(exc)
            return
        st.text("This will erase:\n" + "\n".join(f"- {line}" for line in erased))
        with st.form(f"{key}_forget_form"):
            reason, confirmed = reason_fields(f"{key}_forget", destructive=True,
                                              confirm_text="Erase this record and its earlier versions")
            submitted = st.form_submit_button("Forget", key=f"{key}_forget_submit", type="primary")
        if submitted and check_reason(reason, confirmed):
            try:
                ids = actions.forget_record(service, identity, record.id, reason)
            except Exception as exc:  # noqa: BLE001 - shown to the user
                show_error(exc)
            else:
                flash(f"Forgot {len(ids)} record version(s): {', '.join(ids)}")
                if table_key:
                    clear_selection(table_key, *([selection_key] if selection_key else []))
                elif selection_key:
                    st.session_state.pop(selection_key, None)
                reset_fields(f"{key}_forget_reason", f"{key}_forget_confirm")
                st.query_params.pop("record", None)  # the permalink pointed at what is now a tombstone
                st.rerun()
