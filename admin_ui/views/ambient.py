"""The ambient profile in the app: a user's own page (see, remove, put back) and the reviewers' queue.

The rows and the decisions are in :mod:`admin_ui.data.ambient`. Record text is shown literally.
"""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data.ambient import (AMBIENT, CANDIDATE, REMOVED, ambient_candidates, profile_rows, remove_item, restore_item,
                            review_decision)
from ..data.records import open_record
from .widgets import (check_reason, content_block, flash, labeller, read_only_note, reason_fields, reset_fields, show_error,
                      table)


def _run(fn, message: str, reset: list[str]) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - shown to the person
        show_error(exc)
    else:
        flash(message)
        reset_fields(*reset)
        st.rerun()


def render_own_profile(service, identity: Identity, user_id: str) -> None:
    """The profile page: what is in it, what waits, what was removed; removal for its owner."""
    rows = profile_rows(service, user_id)
    own = identity.role == "user" and identity.user_id == user_id
    if not rows:
        st.info("Nothing is in this ambient profile. Preferences such as your answer style, language, units, how to "
                "address you or accessibility needs appear here once you state them to an assistant.")
        return
    table([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows], key="profile_table")
    current = {r["record"]: r for r in rows if r["_state"] in (AMBIENT, CANDIDATE)}
    removed = {r["record"]: r for r in rows if r["_state"] == REMOVED}
    if not own:
        read_only_note(identity, "change another person's profile")
        return
    c1, c2 = st.columns(2)
    with c1.form("profile_remove_form"):
        st.markdown("**Remove an item**")
        st.caption("It will not enter any future session's profile. Sessions already started keep the profile they "
                   "recorded. The record itself stays in your memory (forget it on My memory to erase it).")
        labels = {rid: f"{rid} · {r['text'][:70]}" for rid, r in current.items()}
        chosen = st.selectbox("Item", list(labels), index=None, format_func=labeller(labels), key="profile_remove_id",
                              placeholder="Choose an item")
        reason, ok = reason_fields("profile_remove", destructive=True, confirm_text="Remove it from my profile")
        if st.form_submit_button("Remove", key="profile_remove_submit") and check_reason(reason, ok):
            if not chosen:
                st.error("Choose an item first.")
            else:
                _run(lambda: remove_item(service, identity, chosen, reason),
                     f"Removed {chosen} from your profile. Put it back below if that was a mistake.",
                     ["profile_remove_reason", "profile_remove_confirm", "profile_remove_id"])
    with c2.form("profile_restore_form"):
        st.markdown("**Put an item back**")
        labels = {rid: f"{rid} · {r['text'][:70]}" for rid, r in removed.items()}
        chosen_back = st.selectbox("Removed item", list(labels), index=None, format_func=labeller(labels),
                                   key="profile_restore_id", placeholder="Nothing removed" if not labels else "Choose an item")
        reason_back, _ = reason_fields("profile_restore")
        if st.form_submit_button("Put back", key="profile_restore_submit") and check_reason(reason_back, True):
            if not chosen_back:
                st.error("Choose a removed item first.")
            else:
                _run(lambda: restore_item(service, identity, chosen_back, reason_back), f"Put {chosen_back} back.",
                     ["profile_restore_reason", "profile_restore_id"])


def render_ambient_review(service, identity: Identity) -> None:
    """The review queue's ambient tab: candidates a reviewer approves or refuses, one at a time."""
    candidates = ambient_candidates(service)
    if not candidates:
        st.info("No ambient candidate waits. A record becomes one when it states a response-shaping preference "
                "(answer style, language, units, address, accessibility) but is not a confirmed user statement or "
                "system fact, for example a tool result.")
        return
    st.caption("An approved record joins the profile of sessions that start afterwards, for this version only.")
    table([{"record": r.id, "text": r.content, "source": r.source_kind, "status": r.status, "category": s.category,
            "version": r.version, "scope": r.scope, "why": s.reason} for r, s in candidates], key="ambient_review_table")
    labels = {r.id: f"{r.id} · {r.content[:80]}" for r, _ in candidates}
    chosen = st.selectbox("Decide on one candidate", list(labels), index=None, format_func=labeller(labels),
                          key="ambient_review_selected", placeholder="Choose a candidate")
    if not chosen:
        return
    record = open_record(service, chosen)
    st.caption("Content")
    content_block(record.content)
    st.caption("Evidence")
    content_block(record.evidence)
    if not identity.can("review"):
        read_only_note(identity, "decide on ambient candidates")
        return
    with st.form("ambient_review_form"):
        decision = st.segmented_control("Decision", ["approved", "refused"], key="ambient_review_decision",
                                        format_func={"approved": "Approve", "refused": "Refuse"}.get, default="approved")
        reason, _ = reason_fields("ambient_review")
        if st.form_submit_button("Save decision", key="ambient_review_submit", type="primary") and check_reason(reason, True):
            _run(lambda: review_decision(service, identity, chosen, decision or "approved", reason),
                 f"{'Approved' if (decision or 'approved') == 'approved' else 'Refused'} {chosen} for the ambient profile",
                 ["ambient_review_reason", "ambient_review_selected"])
