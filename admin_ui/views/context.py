"""The context view: a session's prompt prefix as recorded and every memory its model received.

All memory text, system text, policy, queries and tool descriptions are untrusted: they are shown
through ``st.text``, ``st.code`` (``content_block``), ``st.json`` and dataframes only, never as
markdown or HTML. Links go to the record page (``?record=``) and the search explorer (``?search=``).
"""

from __future__ import annotations

import streamlit as st

from ..data.session_context import ContextView, Delivery, build_context_view, context_parts
from .context_sizes import render_parts
from .navigation import page_path
from .timefmt import show_time
from .widgets import content_block, md_escape, table

RECORDS_PAGE = page_path("records.py")
EXPLORER_PAGE = page_path("search_explorer.py")


def render_context(service, session_id: str) -> ContextView | None:
    """The whole view for one session (None when there is no such session)."""
    view = build_context_view(service, session_id)
    if view is None:
        st.warning(md_escape(f"No session {session_id}."))
        return None
    info = view.session
    with st.container(border=True, key="context_session"):
        st.text(f"session {info['id']} · agent {info['agent_id']} · user {info['user_id']} · "
                f"project {info.get('project_id') or '-'} · {info.get('framework') or 'no adapter'} · "
                f"{info.get('trigger_mode') or '-'} · started {show_time(info['started_at'])} · ended {show_time(info.get('ended_at'))}"
                + (f" ({info['end_reason']})" if info.get("end_reason") else ""))
    render_parts(context_parts(view), "context_sizes")
    _prefix(view)
    _timeline(view)
    return view


def _prefix(view: ContextView) -> None:
    st.subheader("Prompt prefix as recorded")
    prefix = view.prefix
    if prefix is None:
        st.info("No prefix was recorded for this session: it was not opened through an adapter (or before the "
                "store recorded prefixes). Its searches are still listed below.")
        return
    st.caption(md_escape(f"Recorded at session start {show_time(prefix['recorded_at'])}; first model call "
                         f"{show_time(prefix.get('model_view_at'), 'not seen yet')}."))
    render_prefix(prefix, "context")


def render_prefix(prefix: dict, key: str) -> None:
    """A prefix, recorded or previewed: system text, policy, profile and tools (widget keys ``<key>_...``)."""
    with st.container(key=f"{key}_system"):
        st.markdown("**System text the model received** (the host's text, the memory-use policy and the profile)")
        if prefix.get("system_text") is not None:
            content_block(prefix["system_text"])
        elif prefix.get("adapter_prefix") is not None:
            st.caption("What the adapter adds to the host's own system text (the policy, then the profile):")
            content_block(prefix["adapter_prefix"])
        else:
            st.caption("The session has had no model call yet: the adapter records the whole system text on the first.")
    with st.container(key=f"{key}_policy"):
        st.markdown("**Memory-use policy**")
        content_block(prefix["policy"])
    with st.container(key=f"{key}_profile"):
        _profile(prefix, key)
    with st.container(key=f"{key}_tools"):
        st.markdown("**Tool definitions**")
        offered = prefix.get("offered_tools")
        if offered:
            table([{"name": t.get("name"), "description": t.get("description")} for t in offered], key=f"{key}_offered_tools")
        st.caption("Memory tools as the core defined them")
        st.json(prefix.get("memory_tools") or [], expanded=False)


def _profile(prefix: dict, key: str) -> None:
    st.markdown("**Ambient profile**")
    if not prefix.get("ambient_enabled"):
        st.caption("Off for this session (the host did not enable it)." if prefix.get("recorded_at")
                   else "Off: the host has not turned the ambient profile on.")
        return
    items = prefix.get("profile_items") or []
    limits = prefix.get("profile_limits") or {}
    fixed = "fixed at session start" if prefix.get("recorded_at") else "as a session starting now would get it"
    st.caption(md_escape(f"{len(items)} item(s) within max {limits.get('max_items')} items and "
                         f"{limits.get('max_tokens')} tokens, {fixed}."))
    if not items:
        st.caption("No record qualified: nothing was added to the prefix.")
    else:
        table([{"record": i["record_id"], "text": i["text"], "version": i["version"], "category": i["category"],
                "scope": i["scope"], "why ambient": i["basis"]} for i in items], key=f"{key}_profile_items")
        content_block(prefix.get("profile_text"))
        for item in items:
            st.page_link(RECORDS_PAGE, label=md_escape(f"Open {item['record_id']} (version {item['version']})"),
                         query_params={"record": item["record_id"]}, icon=":material/description:")
    excluded = prefix.get("profile_excluded") or []
    if excluded:
        st.caption("Left out at assembly")
        table(excluded, key=f"{key}_profile_excluded")


def _timeline(view: ContextView) -> None:
    st.subheader("Turn by turn: the memories the model received")
    st.caption(md_escape(f"{view.memories_received} memory result(s) reached the model. "
                         + ("Host decisions are shown with their candidates." if view.host_decisions_recorded
                            else "This store has no host-issued memory table; only searches are shown.")))
    n = 0
    for delivery in view.before_turns:
        n = _delivery(delivery, n)
    if not view.turns:
        st.caption("No turns recorded.")
    for turn in view.turns:
        with st.container(border=True, key=f"context_turn_{turn.turn}"):
            st.text(f"turn {turn.turn} · {turn.role} · {show_time(turn.at, 'no time')}")
            content_block(turn.content)
            for delivery in turn.deliveries:
                n = _delivery(delivery, n)


def _delivery(delivery: Delivery, n: int) -> int:
    with st.container(border=True, key=f"context_delivery_{n}"):
        received = "received by the model" if delivery.received else "not shown to the model"
        st.text(f"{delivery.label} · {received} · {show_time(delivery.at, 'no time')}")
        if delivery.query:
            st.caption("Query")
            content_block(delivery.query)
        if delivery.gaps:
            st.caption("Gaps the host looked for")
            content_block("\n".join(delivery.gaps))
        if delivery.reason:
            st.caption("Decision")
            content_block(delivery.reason)
        if delivery.memories:
            rows = [{"record": m.record_id, "content": m.content, "version": m.version, "status": m.status_label,
                     "tokens (est.)": m.tokens, "scope": m.scope, "admitted": m.admitted, "score": m.score, "why": m.reason}
                    for m in delivery.memories]
            table(rows, key=f"context_memories_{n}")
        elif delivery.empty_reason:
            st.caption("Empty result")
            content_block(delivery.empty_reason)
        if delivery.message is not None:
            st.caption("Tool result appended for the model")
            content_block(delivery.message)
        for search_id in delivery.search_ids:
            st.page_link(EXPLORER_PAGE, label=md_escape(f"Explain search {search_id}"), query_params={"search": search_id},
                         icon=":material/manage_search:")
    return n + 1
