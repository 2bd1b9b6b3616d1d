"""Keys: the MCP server's API keys: list with last use, create (the token is shown once), revoke."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data.keys import KIND_HELP, client_snippet, create, key_rows, live_key_labels, revoke
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.widgets import (
    check_reason, empty_state, flash, labeller, md_escape, page_number, pager, reason_fields,
    reset_fields, show_error, show_flash, table,
)

identity = require_identity()
service = get_service()
st.title("Keys")
show_flash()
st.caption("Keys of `agent-memory mcp --http`. A key names a principal (agent, user, optional project); grants still "
           "decide what it may read and write. A model key opens MCP sessions; a host key reports transcripts "
           "through hooks and is refused for MCP sessions. Tokens are stored only as a hash and shown once.")

if not identity.can("grant"):  # the menu hides the page too; this guards a direct run of the script
    st.warning(md_escape(f"Your role ({identity.role}) cannot open Keys: keys are managed by operators and admins."))
    st.stop()

include_revoked = st.toggle("Show revoked keys", value=True, key="keys_show_revoked")
listing = st.container()  # filled at the end of the run, so a key created below is already in it


def show_keys() -> None:
    with listing:
        page = key_rows(service, include_revoked=include_revoked, page=page_number("keys", include_revoked),
                        page_size=get_settings().ui.page_size)
        if page.total:
            table(page.items, key="keys_table")
            pager("keys", page, "keys")
        else:
            empty_state("No keys yet." if include_revoked else "No live keys.",
                        "Create one below, or with `agent-memory keys create --agent-id A --user-id U`.")


st.subheader("Create or revoke a key")
left, right = st.columns(2)
with left.form("key_create_form"):
    st.markdown("**Create a key**")
    kind = st.selectbox("Kind", list(KIND_HELP), key="key_create_kind", format_func=lambda k: f"{k}: {KIND_HELP[k]}")
    agent_id = st.text_input("Agent id", key="key_create_agent")
    user_id = st.text_input("User id", key="key_create_user")
    project_id = st.text_input("Project id (optional)", key="key_create_project")
    label = st.text_input("Label (optional, e.g. 'laptop, Claude Code')", key="key_create_label", max_chars=200)
    reason, _ = reason_fields("key_create")
    if st.form_submit_button("Create key", key="key_create_submit", type="primary") and check_reason(reason, True):
        try:
            row, token = create(service, identity, kind=kind, agent_id=agent_id, user_id=user_id, project_id=project_id,
                                label=label, reason=reason)
        except Exception as exc:  # noqa: BLE001 - the core's refusal is shown as it is
            show_error(exc)
        else:
            # Shown in this run only: nothing keeps the token, so the next interaction clears it.
            st.success(md_escape(f"Created {row['kind']} key {row['id']} for {row['agent_id']}/{row['user_id']}."))
            st.warning("Copy the token now: it is not stored and will not be shown again. Leaving or reloading "
                       "this page clears it; a lost token cannot be recovered, only revoked and replaced.")
            st.caption("To copy: use the copy button at the top right of the box below (it appears on hover), "
                       "or select the text.")
            st.code(token, language=None, wrap_lines=True)
            st.caption("Where it goes")
            st.code(client_snippet(row, token), language=None, wrap_lines=True)
            reset_fields("key_create_agent", "key_create_user", "key_create_project", "key_create_label", "key_create_reason")

with right.form("key_revoke_form"):
    st.markdown("**Revoke a key**")
    labels = live_key_labels(service)
    target = st.selectbox("Key", list(labels), index=None, format_func=labeller(labels), key="key_revoke_choice",
                          placeholder="Choose a live key")
    reason, confirmed = reason_fields("key_revoke", destructive=True, confirm_text="Refuse this key's token from now on")
    if st.form_submit_button("Revoke", key="key_revoke_submit") and check_reason(reason, confirmed):
        if not target:
            st.error("Choose a key to revoke.")
        else:
            try:
                row = revoke(service, identity, target, reason)
            except Exception as exc:  # noqa: BLE001
                show_error(exc)
            else:
                flash(f"Revoked key {row['id']} ({row['agent_id']}/{row['user_id']}): its token now gets 401.")
                reset_fields("key_revoke_choice", "key_revoke_reason", "key_revoke_confirm")
                st.rerun()

show_keys()
