"""Grants: list, add, revoke, and the effective readable/writable scopes of any principal."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import actions, records
from admin_ui.data.grants import effective_access, grant_choices, grant_form_problems, grant_rows
from admin_ui.runtime import get_service, get_settings
from admin_ui.views.widgets import (
    check_first, check_reason, empty_state, flash, md_escape, page_number, pager, read_only_note, reason_fields, reset_fields,
    show_error, show_flash, table,
)

identity = require_identity()
service = get_service()
st.title("Grants")
show_flash()
st.caption("A grant lets an agent read (and optionally write) one scope. Scopes do not inherit, and each "
           "agent-user pair's private scope is implicit and can never be granted.")

agents = records.known_agents(service)
users = records.known_users(service)

c1, c2 = st.columns(2)
agent_filter = c1.selectbox("Agent", ["(any)", *agents], key="grants_agent")
scope_filter = c2.text_input("Scope contains", key="grants_scope")
agent_id = None if agent_filter == "(any)" else agent_filter
page = grant_rows(service, agent_id, scope_filter, page_number("grants", (agent_id, scope_filter)), get_settings().ui.page_size)
if page.total:
    table(page.items, key="grants_table", csv=True)
    pager("grants", page, "grants")
else:
    empty_state("No grants match." if agent_id or scope_filter else "No grants yet: agents can only use their private scopes.",
                "Add one below.")

st.subheader("Effective access of a principal")
c1, c2 = st.columns(2)
p_agent = c1.selectbox("Agent", agents, index=None, accept_new_options=True, key="grants_principal_agent",
                       placeholder="Choose or type an agent id")
p_user = c2.selectbox("User", users, index=None, accept_new_options=True, key="grants_principal_user",
                      placeholder="Choose or type a user id")
if p_agent and p_user:
    try:
        access = effective_access(service, p_agent, p_user)
    except Exception as exc:  # noqa: BLE001
        show_error(exc)
    else:
        table(access, key="grants_access_table")
        st.caption(md_escape(f"This is exactly what a search by {p_agent} acting for {p_user} can read."))

st.subheader("Change grants")
if not identity.can("grant"):
    read_only_note(identity, "change grants")
    st.stop()

left, right = st.columns(2)
with left.form("grant_add_form"):
    st.markdown("**Add or change a grant**")
    g_agent = st.text_input("Agent id", key="grant_add_agent")
    g_scope = st.text_input("Scope", key="grant_add_scope", placeholder="user:<id>, project:<id>, org:<id> or agent:<id>")
    g_read = st.checkbox("Read", value=True, key="grant_add_read")
    g_write = st.checkbox("Write", value=False, key="grant_add_write")
    reason, _ = reason_fields("grant_add")
    # Problems are named in the order the fields are drawn: agent, scope, then the reason.
    if st.form_submit_button("Save grant", key="grant_add_submit", type="primary") \
            and check_first(*grant_form_problems(g_agent, g_scope)) and check_reason(reason, True):
        try:
            result = actions.add_grant(service, identity, g_agent, g_scope, g_read, g_write, reason)
        except Exception as exc:  # noqa: BLE001 - the policy's refusal is shown as it is
            show_error(exc)
        else:
            flash(f"Granted {result['agent_id']} {'read' if result['read'] else ''}{'+write' if result['write'] else ''} "
                  f"on {result['scope']}")
            reset_fields("grant_add_agent", "grant_add_scope", "grant_add_reason")
            st.rerun()

with right.form("grant_revoke_form"):
    st.markdown("**Revoke a grant**")
    all_grants = grant_choices(service)
    target = st.selectbox("Grant", all_grants, index=None, key="grant_revoke_choice", placeholder="Choose a grant")
    reason, ok = reason_fields("grant_revoke", destructive=True, confirm_text="Remove this access now")
    if st.form_submit_button("Revoke", key="grant_revoke_submit") \
            and check_first(None if target else "Choose a grant to revoke.") and check_reason(reason, ok):
        agent, scope = target.split(" → ", 1)
        try:
            actions.revoke_grant(service, identity, agent, scope, reason)
        except Exception as exc:  # noqa: BLE001
            show_error(exc)
        else:
            flash(f"Revoked {agent} on {scope}")
            reset_fields("grant_revoke_choice", "grant_revoke_reason", "grant_revoke_confirm")
            st.rerun()
