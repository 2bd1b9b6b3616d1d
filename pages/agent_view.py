"""What an agent sees: for an agent and a user, the scopes it reads and the prefix its model would get."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import records
from admin_ui.data.agent_view import build_agent_view, default_modes
from admin_ui.runtime import get_service
from admin_ui.views.agent_view import render_agent_view
from admin_ui.views.widgets import empty_state, show_error, show_flash

identity = require_identity()
service = get_service()
st.title("What an agent sees")
show_flash()
st.caption("Before any session: the scopes an agent can read for a user, with the grant behind each, and the "
           "memory-use policy, ambient profile and tools an adapter would give its model. The Session context page "
           "shows the same for a session that happened.")

mode_default, ambient_default = default_modes(service)
c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
agent = c1.selectbox("Agent", records.known_agents(service), index=None, key="agent_view_agent",
                     placeholder="Choose an agent", accept_new_options=True)
user = c2.selectbox("User", records.known_users(service), index=None, key="agent_view_user",
                    placeholder="Choose a user", accept_new_options=True)
modes = ["tool_only", "auto", "hybrid"]
mode = c3.selectbox("Trigger mode", modes, index=modes.index(mode_default), key="agent_view_mode",
                    help="Who calls memory_search: the model (tool_only), the host (auto) or both (hybrid).")
ambient = c4.toggle("Ambient profile", value=ambient_default, key="agent_view_ambient",
                    help="The host turns the profile on (MemoryRuntime's ambient argument, else ambient.enabled).")
if not agent or not user:
    empty_state("Choose an agent and a user to see what the agent would see.",
                "Agents and users are those the store has grants, sessions or records for; you may type another id.")
    st.stop()
try:
    view = build_agent_view(service, agent.strip(), user.strip(), trigger_mode=mode, ambient=ambient)
except Exception as exc:  # noqa: BLE001 - a malformed id: said plainly
    show_error(exc)
    st.stop()
render_agent_view(view)
