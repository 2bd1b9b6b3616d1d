"""Session context: the prompt prefix a session's model received, and every memory it got, turn by turn."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data.session_context import recent_sessions
from admin_ui.runtime import get_service
from admin_ui.views.context import render_context
from admin_ui.views.timefmt import show_time
from admin_ui.views.widgets import empty_state, labeller, permalink, show_flash

identity = require_identity()
service = get_service()
st.title("Session context")
show_flash()
st.caption("What the model saw: the prefix recorded when the session started (system text, memory-use policy, "
           "ambient profile, tools), then each turn with the memories that reached the model.")

sessions = recent_sessions(service)
labels = {s["id"]: f"{show_time(s['started_at'])} · {s['id']} · {s['agent_id']}/{s['user_id']} · {s['framework'] or 'no adapter'}"
          + (" · prefix recorded" if s["recorded"] else "") for s in sessions}
linked = st.query_params.get("session")
if linked and "context_session_id" not in st.session_state:
    st.session_state["context_session_id"] = linked
    if linked not in labels:
        labels[linked] = linked
chosen = st.selectbox("Session", list(labels), index=None, format_func=labeller(labels), key="context_session_id",
                      placeholder="Choose a session", accept_new_options=True)
permalink("session", chosen)
if not chosen:
    empty_state("Choose a session to see what its model received.",
                "Sessions opened through the Deep Agents or CrewAI adapter record their prefix; others show searches only.")
    st.stop()
render_context(service, chosen.strip())
