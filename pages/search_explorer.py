"""Search explorer: run the real pipeline as any principal, step through its stages, reopen logged searches."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import records, search
from admin_ui.data.records import RECORD_TYPES
from admin_ui.runtime import get_service
from admin_ui.views.search import render_response
from admin_ui.views.timefmt import show_time
from admin_ui.views.widgets import empty_state, labeller, md_escape, permalink, show_error, show_flash

identity = require_identity()
service = get_service()
st.title("Search explorer")
show_flash()


def _open(search_id: str) -> None:
    try:
        response = search.load_search(service, search_id)
    except Exception as exc:  # noqa: BLE001
        st.session_state.pop("explorer_response", None)
        show_error(exc)
        return
    if response is None:
        st.session_state.pop("explorer_response", None)
        st.error(md_escape(f"No search {search_id} in the log."))
        return
    st.session_state["explorer_response"] = response
    st.session_state["explorer_stage"] = 1


pending = st.session_state.pop("explorer_load_id", None)  # set by the Logs page
linked = st.query_params.get("search")  # a permalink, unless it is the one this page wrote itself
current = st.session_state.get("explorer_response")
if pending:
    _open(pending)
elif linked and linked != st.session_state.get("_explorer_link") and (current is None or current.search_id != linked):
    st.session_state["_explorer_link"] = linked  # a bad link is reported once, not on every run
    _open(linked)

with st.expander("Open a logged search", expanded=False):
    recent = search.recent_searches(service)
    labels = {r["id"]: f"{show_time(r['at'])} · {r['agent_id']}/{r['user_id']} · {r['results']} result(s) · {r['raw_query'][:60]}"
              for r in recent}
    c1, c2 = st.columns([3, 1])
    chosen = c1.selectbox("Recent searches", list(labels), index=None, format_func=labeller(labels),
                          key="explorer_recent", placeholder="Choose one of the latest searches")
    typed = c2.text_input("…or a search id", key="explorer_search_id")
    if st.button("Open", key="explorer_open"):
        target = typed.strip() or chosen
        if target:
            _open(target)
        else:
            st.error("Choose a search or type its id.")

agents, users = records.known_agents(service), records.known_users(service)
options = search.explorer_options(service)
with st.form("explorer_form"):
    c1, c2 = st.columns(2)
    agent = c1.selectbox("Agent", agents, index=None, accept_new_options=True, key="explorer_agent",
                         placeholder="Choose or type an agent id")
    user = c2.selectbox("Acting for user", users, index=None, accept_new_options=True, key="explorer_user",
                        placeholder="Choose or type a user id")
    # No max_chars: the browser would silently drop a longer paste; the length is checked below instead.
    query = st.text_input("Query", key="explorer_query")
    with st.expander("Filters and flags"):
        f1, f2, f3 = st.columns(3)
        types = f1.multiselect("Types", RECORD_TYPES, key="explorer_types")
        time_from = f2.date_input("Event time from", value=None, key="explorer_time_from", help=search.WINDOW_HELP)
        time_to = f3.date_input("Event time to", value=None, key="explorer_time_to", help=search.WINDOW_HELP)
        g1, g2, g3 = st.columns(3)
        hints = g1.text_input("Entity hints (comma separated)", key="explorer_hints")
        limit = g2.number_input("Limit", min_value=1, max_value=options.max_limit, value=options.default_limit,
                                key="explorer_limit")
        historical = g3.checkbox("Historical mode (include superseded and expired)", key="explorer_historical")
        h1, h2 = st.columns(2)
        rewrite = h1.checkbox("Rewrite the query", key="explorer_rewrite", value=options.rewrite_default,
                              disabled=not options.rewrite_available,
                              help=None if options.rewrite_available else
                              "Needs an Anthropic API key or an OpenAI-compatible model (retrieval.rewrite_provider).")
        rerank = h2.checkbox("Rerank", key="explorer_rerank", value=options.rerank_default,
                             disabled=not options.rerank_available,
                             help=None if options.rerank_available else "No reranker model is configured.")
    with st.container(key="explorer_as_of"):  # as-of search: docs/as-of-search.md
        a1, a2, a3 = st.columns([1, 1, 2])
        as_of_date = a1.date_input("As of: date (UTC)", value=None, key="explorer_as_of_date",
                                   help="Search the memory as it was at this instant; empty searches it as it is now.")
        as_of_time = a2.time_input("As of: time (UTC)", value=None, key="explorer_as_of_time", step=60,
                                   help="Empty means the end of that day (23:59:59 UTC).")
        as_of_mode = a3.radio("As of: search", list(search.AS_OF_LABELS), format_func=search.AS_OF_LABELS.get,
                              key="explorer_as_of_mode", horizontal=True)
    submitted = st.form_submit_button("Search", key="explorer_run", type="primary")
if st.session_state.pop("explorer_edit_note", False):
    st.info("The form now holds that search's request: change what you like and press Search.")

if submitted:
    problem = search.form_problem(agent, user, query, options.max_query_chars)
    if problem:
        # A failed search must not leave the previous answer underneath, as if it answered this input.
        st.session_state.pop("explorer_response", None)
        st.error(md_escape(problem))
    else:
        form = search.SearchForm(agent, user, query, types, time_from, time_to, hints, int(limit), historical,
                                 rewrite if options.rewrite_available else None,
                                 rerank if options.rerank_available else None,
                                 as_of_date=as_of_date, as_of_time=as_of_time, as_of_mode=as_of_mode)
        with st.spinner("Searching…"):
            try:
                st.session_state["explorer_response"] = search.run_search(service, form)
                st.session_state["explorer_stage"] = 1
            except Exception as exc:  # noqa: BLE001
                st.session_state.pop("explorer_response", None)
                show_error(exc)

response = st.session_state.get("explorer_response")
st.session_state["_explorer_link"] = response.search_id if response is not None else None
permalink("search", st.session_state["_explorer_link"])
if response is None:
    empty_state("Pick an agent and the user it acts for, type a query and press Search.",
                "The search runs the real pipeline with exactly that agent's grants and is logged like any other.")
else:
    render_response(service, identity, response)
