"""The "What an agent sees" view: readable scopes with their grants, and the prefix an adapter would build.

Scope names, grant reasons, the policy, profile text and tool descriptions are shown through
``st.text``, ``content_block``, ``st.json`` and dataframes only (never markdown or HTML).
"""

from __future__ import annotations

import streamlit as st

from ..data.agent_view import AgentView, empty_reason
from .context import render_prefix
from .context_sizes import render_parts
from .navigation import page_path
from .widgets import md_escape, table

GRANTS_PAGE = page_path("grants.py")


def render_agent_view(view: AgentView) -> None:
    """Scopes (or the empty state saying why there are none), then the previewed prefix with sizes."""
    with st.container(key="agent_scopes"):
        st.subheader("Scopes it can read")
        why_empty = empty_reason(view)
        if why_empty:
            with st.container(key="agent_no_grant"):
                st.warning(md_escape(why_empty))
            st.page_link(GRANTS_PAGE, label="Open Grants", icon=":material/key:")
        st.caption(md_escape(f"{len(view.scopes)} readable scope(s) holding {view.live_records} live record(s) "
                             "(confirmed or provisional); a search of this agent for this user reads only these."))
        table([{"scope": s["scope"], "why it can read": s["why"], "grant": s["grant"] or "none needed (implicit)",
                "can write": s["writable"], "live records": s["live records"]} for s in view.scopes],
              key="agent_scopes_table")
        if view.ignored:
            st.caption("Grants that do not apply to this user")
            table([{"scope": k, "why ignored": v} for k, v in view.ignored.items()], key="agent_ignored_table")
    st.subheader("What its model would be given at session start")
    if view.prefix is None:
        with st.container(key="agent_prefix_problem"):
            st.error(md_escape(f"An adapter with these settings would not start: {view.problem}"))
        return
    st.caption("Built now by the adapters' own code (the runtime's policy and tools, the service's profile "
               "assembly), as a session opened now would record it. Nothing is recorded by this page.")
    render_parts(view.parts, "agent_sizes", title="Prefix, part by part")
    render_prefix(view.prefix, "agent")
