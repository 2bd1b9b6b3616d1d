"""The decision forms of the review queue: one record, or many at once.

Provisional records: confirm, reject (forget) or edit. Review-due records: clear the flag,
revise, or forget. Every form asks for a reason; destructive ones also for a confirmation.
"""

from __future__ import annotations

import streamlit as st

from memory_core.errors import InvalidInputError

from ..auth.accounts import Identity
from ..data import actions
from ..data.dates import resolve_review_date
from ..data.dates import DATE_RULE
from ..data.records import Record, conflict_rows
from .timefmt import show_time
from .widgets import (
    check_first, check_reason, clear_selection, content_block, flash, md_escape, read_only_note, reason_fields,
    reset_fields, show_error, table,
)

# The queue's table: after any decision its tick is cleared with the record it opened.
TABLE_KEY = "review_table"

QUEUES = {"provisional": "Provisional records", "review_due": "Review due"}
BULK_CHOICES = {
    "provisional": {"confirm": "Confirm all selected", "forget": "Reject (forget) all selected"},
    "review_due": {"clear_flag": "Clear the flag on all selected", "forget": "Forget all selected"},
}


def validity_rows(record: Record) -> list[dict]:
    """The flag and the validity bounds a reviewer decides on."""
    return [{"review flagged at": record.review_flagged_at, "flag reason": record.review_reason,
             "review_at": record.review_at, "valid_from": record.valid_from, "valid_until": record.valid_until,
             "event_at": record.event_at, "expires_at": record.expires_at}]


def _run(fn, done_message: str, selection_key: str, reset: list[str] | None = None) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - shown to the reviewer
        show_error(exc)
    else:
        flash(done_message)
        clear_selection(TABLE_KEY, selection_key)
        reset_fields(*(reset or []))
        st.rerun()


def _review_date_preview(service, text: str):
    """Show what the typed review date resolves to (or why it cannot be used); the ResolvedDate or None."""
    if not text or not text.strip():
        return None
    try:
        when = resolve_review_date(service, text)
    except InvalidInputError as exc:
        st.error(md_escape(exc.message))
        return None
    st.caption(md_escape(f"Next review: {describe(when)}"))
    return when


def describe(when) -> str:
    """A resolved review date in the app's one time format, with its ISO value."""
    return f"{show_time(when.moment)} ({when.iso})"


def conflicts_panel(service, identity: Identity, record: Record) -> None:
    """The records this one conflicts with, above the decision forms: a reviewer decides knowing them."""
    rows = conflict_rows(service, identity, record)
    if rows:
        st.warning(md_escape(f"This record conflicts with {len(rows)} other record(s): decide knowing them."))
        table(rows, key="review_conflicts")
    else:
        st.caption("Conflicts: none recorded for this record.")


def decision_forms(service, identity: Identity, record: Record, queue: str, selection_key: str) -> None:
    """The actions a reviewer can take on one record of ``queue``."""
    if queue == "review_due":
        st.caption("Why it was flagged")
        content_block(record.review_reason or "no reason recorded")
        st.caption("The dates the record claims")
        table(validity_rows(record), key="review_validity")
    conflicts_panel(service, identity, record)
    if not identity.can("review"):
        read_only_note(identity, "decide on records")
        return
    rid = record.id
    cols = st.columns(3)
    if queue == "provisional":
        with cols[0].form("review_confirm_form"):
            st.markdown("**Confirm**")
            reason, _ = reason_fields("review_confirm")
            if st.form_submit_button("Confirm", key="review_confirm_submit", type="primary") and check_reason(reason, True):
                _run(lambda: actions.confirm_record(service, identity, rid, reason), f"Confirmed {rid}", selection_key,
                     reset=["review_confirm_reason"])
        with cols[1].form("review_reject_form"):
            st.markdown("**Reject**")
            reason, ok = reason_fields("review_reject", destructive=True, confirm_text="Erase this inference")
            if st.form_submit_button("Reject (forget)", key="review_reject_submit") and check_reason(reason, ok):
                _run(lambda: actions.forget_record(service, identity, rid, reason), f"Rejected and erased {rid}", selection_key,
                     reset=["review_reject_reason", "review_reject_confirm"])
    else:
        with cols[0]:
            st.markdown("**Clear the flag**")
            # Outside the form so the resolved date shows as soon as the box is left, before saving.
            next_review = st.text_input("Next review (optional)", key="review_clear_next",
                                        placeholder="2026-05-01, next week, in 10 days")
            st.caption(md_escape(DATE_RULE))
            when = _review_date_preview(service, next_review)
            with st.form("review_clear_form"):
                reason, _ = reason_fields("review_clear")
                if st.form_submit_button("Clear flag", key="review_clear_submit", type="primary") \
                        and check_reason(reason, True):
                    if next_review.strip() and when is None:
                        st.error("Fix the next review date first (or leave it empty); nothing was changed.")
                    else:
                        _run(lambda: actions.clear_review_flag(service, identity, rid, reason, when and when.iso),
                             f"Cleared the review flag on {rid}"
                             + (f"; next review {describe(when)}" if when else ""), selection_key,
                             reset=["review_clear_next", "review_clear_reason"])
        with cols[1].form("review_forget_form"):
            st.markdown("**Forget**")
            reason, ok = reason_fields("review_forget", destructive=True, confirm_text="Erase this record")
            if st.form_submit_button("Forget", key="review_forget_submit") and check_reason(reason, ok):
                _run(lambda: actions.forget_record(service, identity, rid, reason), f"Erased {rid}", selection_key,
                     reset=["review_forget_reason", "review_forget_confirm"])
    with cols[2].form("review_edit_form"):
        st.markdown("**Edit (new version)**")
        content = st.text_area("Corrected content", value=record.content, key=f"review_edit_content_{rid}")
        reason, _ = reason_fields("review_edit")
        if st.form_submit_button("Save new version", key="review_edit_submit") and check_reason(reason, True):
            _run(lambda: actions.revise_record(service, identity, rid, content, reason),
                 f"Wrote a new version of {rid} (confirmed: a reviewer's edit is a reviewed statement)", selection_key,
                 reset=["review_edit_reason", f"review_edit_content_{rid}"])


def bulk_form(service, identity: Identity, queue: str, ids: list[str], selection_key: str) -> None:
    """One action on every selected record, with a confirmation and a progress bar."""
    if not identity.can("review"):
        return
    choices = BULK_CHOICES[queue]
    with st.form("review_bulk_form"):
        st.markdown(md_escape(f"Bulk action on {len(ids)} selected record(s)"))
        action = st.selectbox("Action", list(choices), format_func=choices.get, key="review_bulk_action")
        reason, ok = reason_fields("review_bulk", destructive=True,
                                   confirm_text="Apply this action to every selected record")
        submitted = st.form_submit_button("Apply", key="review_bulk_submit", type="primary")
    # Checked in the order the fields are drawn: the records (above the form), then the reason.
    if submitted and check_first(None if ids else "Select at least one record first.") and check_reason(reason, ok):
        bar = st.progress(0.0, text="Working…")
        result = actions.bulk(service, identity, action, ids, reason,
                              progress=lambda n, total: bar.progress(n / total, text=f"{n} of {total}"))
        for rid, error in result.failed.items():
            st.error(md_escape(f"{rid}: {error}"))
        flash(result.summary({"confirm": "Confirmed", "forget": "Forgot", "clear_flag": "Cleared the flag on"}[action]))
        clear_selection(TABLE_KEY, selection_key, "review_selected")
        reset_fields("review_bulk_reason", "review_bulk_confirm")
        if not result.failed:
            st.rerun()
