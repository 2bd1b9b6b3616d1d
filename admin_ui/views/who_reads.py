"""The "Who reads my memory" box on a user's own page: agents that can read it, and their searches."""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data import who_reads
from .widgets import md_escape, page_number, pager, table


def render_who_reads(service, identity: Identity) -> None:
    """For the user role only: every agent that can read the scopes she owns, and the searches made for her."""
    if identity.role != "user" or not identity.user_id:
        return
    me = identity.user_id
    with st.expander("Who reads my memory", expanded=False):
        st.caption(md_escape(
            f"An agent reads user:{me} only through a grant an operator gave it, and only while it acts for you; "
            f"each agent also keeps a private scope agent:<agent>/{me} of its own. Ask an operator to remove a grant."))
        table(who_reads.readers(service, me), key="who_reads_agents",
              empty="No agent can read your memory: there is no grant on your scope and no private scope holds a record.")
        st.caption("Searches agents made for you, newest first (the query is the agent's own words).")
        page = who_reads.searches_for(service, me, page_number("who_reads", me), 20)
        table(page.items, key="who_reads_searches", empty="No agent has searched your memory yet.")
        pager("who_reads", page, "searches")
