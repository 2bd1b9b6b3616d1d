"""Sign-in for the app's Streamlit sessions: local accounts, OIDC through ``st.login``, the localhost demo.

The signed-in :class:`~admin_ui.auth.accounts.Identity` lives in ``st.session_state["identity"]``
and, so a reload or a typed URL never changes who you are, in the server's :class:`SignInStore`
(:mod:`admin_ui.auth.sign_in_store`), reached by an HttpOnly cookie the server's own routes set
(:mod:`admin_ui.auth.routes`). Every run checks that the sign-in is still on, so a sign-out in one
tab (or a sign-in taken as stolen) ends it in every tab. The sign-in form itself is a view
(:mod:`admin_ui.views.sign_in_page`).
"""

from __future__ import annotations

import json

import streamlit as st

from ..runtime import get_settings
from .accounts import Account, AccountsError, Identity, demo_identity, demo_sign_in_allowed, identity_for_oidc, load_accounts
from .routes import installed_store, route_path
from .sign_in_store import COOKIE_NAME, SIGNED_OUT, SIGNED_OUT_REASON, is_token

IDENTITY_KEY = "identity"
SIGNED_OUT_KEY = "_signed_out"
SIGN_IN_KEY = "_sign_in"  # the server-side sign-in id (never sent to the browser)
GRANT_KEY = "_signin_grant"  # a grant the page still has to post to the claim route
CLEAR_KEY = "_signin_clear"  # the page still has to ask the clear route to drop a dead cookie
EXPIRED_KEY = "_signin_expired"  # why an earlier sign-in ended (shown on the sign-in page)


def _cookie() -> str | None:
    try:
        value = st.context.cookies.get(COOKIE_NAME)
    except Exception:  # noqa: BLE001 - no browser context (bare scripts)
        return None
    return value if isinstance(value, str) and value else None  # AppTest answers with a mock


def _user_agent() -> str | None:
    try:
        value = st.context.headers.get("User-Agent")
    except Exception:  # noqa: BLE001
        return None
    return value if isinstance(value, str) else None


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def remember(identity: Identity) -> None:
    """Sign ``identity`` in for this session and, when the server has the sign-in routes, across reloads."""
    st.session_state.pop(SIGNED_OUT_KEY, None)
    st.session_state.pop(EXPIRED_KEY, None)
    st.session_state.pop(CLEAR_KEY, None)
    st.session_state[IDENTITY_KEY] = identity
    store = installed_store()
    if store is None:
        return  # started without entry/app.py's routes: this sign-in lasts as long as the session
    sign_in = store.start(identity, _user_agent())
    store.bind(sign_in.id, _session_id())
    st.session_state[SIGN_IN_KEY] = sign_in.id
    st.session_state[GRANT_KEY] = store.grant(sign_in.id)


def _post(path: str, headers: dict[str, str]) -> str:
    """One line of JavaScript posting to our own route; the server's answer sets the cookie."""
    return (f"<script>fetch({json.dumps(path)}, {{method: 'POST', credentials: 'same-origin', cache: 'no-store', "
            f"headers: {json.dumps(headers)}}});</script>")


def sync_cookie() -> None:
    """Ask the server to set (after a sign-in) or clear (after it ended) the HttpOnly sign-in cookie.

    The page only relays a single-use grant; the token itself never reaches page JavaScript.
    """
    store = installed_store()
    if store is None:
        return
    grant = st.session_state.get(GRANT_KEY)
    if grant and is_token(grant) and store.grant_pending(grant):
        st.html(_post(route_path("claim"), {"X-Sign-In-Grant": grant}), unsafe_allow_javascript=True)
    elif grant:
        st.session_state.pop(GRANT_KEY, None)
    if st.session_state.pop(CLEAR_KEY, False):
        st.html(_post(route_path("clear"), {}), unsafe_allow_javascript=True)


def _ended_here(reason: str | None) -> None:
    """This session's sign-in ended elsewhere (another tab signed out, it expired, it was copied)."""
    _clear_session()
    st.session_state[SIGNED_OUT_KEY] = True
    st.session_state[CLEAR_KEY] = True
    if reason and reason != SIGNED_OUT_REASON:
        st.session_state[EXPIRED_KEY] = reason


def _clear_session() -> None:
    for key in list(st.session_state.keys()):
        if not str(key).startswith("$$"):  # Streamlit's own bookkeeping stays
            del st.session_state[key]


def _still_valid(identity: Identity) -> bool:
    """A remembered password sign-in holds only while its account keeps the same role."""
    if identity.method != "password":
        return True
    accounts, _ = configured_accounts()
    account = accounts.get(identity.username)
    if account is None:
        return False
    again = getattr(account, "identity", None)
    current = again() if callable(again) else None
    return current is None or (current.role, current.user_id) == (identity.role, identity.user_id)


def oidc_configured() -> bool:
    """True when ``[auth]`` is present in Streamlit's secrets."""
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file at all
        return False


def configured_accounts() -> tuple[dict[str, Account], str | None]:
    """The accounts of ``ui.accounts_file`` and, if the file cannot be read, why (with no accounts)."""
    try:
        return load_accounts(get_settings().ui.accounts_file), None
    except AccountsError as exc:
        return {}, str(exc)


def server_address() -> str | None:
    """The address the server is bound to (demo sign-in needs localhost)."""
    return st.get_option("server.address")


def current_identity() -> Identity | None:
    """The signed-in identity, signing in the demo operator or an OIDC user when that applies."""
    store = installed_store()
    identity = st.session_state.get(IDENTITY_KEY)
    if identity is not None:
        sign_in_id = st.session_state.get(SIGN_IN_KEY)
        if store is None or sign_in_id is None:
            return identity  # a sign-in kept by this session only
        state = store.check(sign_in_id)
        if state.sign_in is None:
            _ended_here(state.reason)
            return None
        store.bind(sign_in_id, _session_id())
        return identity
    if st.session_state.get(SIGNED_OUT_KEY):
        return None
    cookie = _cookie()
    if store is not None and cookie and cookie != SIGNED_OUT:
        resumed = store.resume(cookie, _user_agent(), _session_id())
        if resumed.sign_in is not None:
            if _still_valid(resumed.sign_in.identity):
                st.session_state[IDENTITY_KEY] = resumed.sign_in.identity
                st.session_state[SIGN_IN_KEY] = resumed.sign_in.id
                return resumed.sign_in.identity
            store.end(resumed.sign_in.id, "the account left the accounts file or changed role", here=_session_id())
            _ended_here("the account left the accounts file or changed role")
            return None
        # Known to this server or not, a cookie that opens nothing never becomes someone else
        # (in demo mode, the demo operator): ask again.
        _ended_here(resumed.reason)
        return None
    if cookie == SIGNED_OUT:  # signed out in an earlier session: no automatic demo sign-in
        st.session_state[SIGNED_OUT_KEY] = True
        return None
    if oidc_configured():
        try:
            logged_in = bool(st.user.is_logged_in)
        except Exception:  # noqa: BLE001
            logged_in = False
        if logged_in:
            accounts, _ = configured_accounts()
            identity = identity_for_oidc(accounts, st.user.get("email"))
            if identity is not None:
                remember(identity)
                return identity
    if cookie:  # a cookie from a server with the sign-in routes, read by one without them
        _ended_here(None)
        st.session_state[EXPIRED_KEY] = "this server does not keep sign-ins across reloads"
        return None
    allowed, _ = demo_sign_in_allowed(get_settings().ui.demo_mode, server_address())
    if allowed:
        remember(demo_identity())
        return st.session_state[IDENTITY_KEY]
    return None


def require_identity() -> Identity:
    """The identity for a page; stops the run when nobody is signed in."""
    identity = st.session_state.get(IDENTITY_KEY)
    if identity is None:
        st.warning("Sign in first.")
        st.stop()
    return identity


def sign_out() -> None:
    """End this sign-in everywhere: on the server, in every tab that shows it, and in the cookie."""
    was_oidc = getattr(st.session_state.get(IDENTITY_KEY), "method", None) == "oidc"
    store = installed_store()
    if store is not None:
        store.end(st.session_state.get(SIGN_IN_KEY), here=_session_id())
    _clear_session()
    st.session_state[SIGNED_OUT_KEY] = True
    st.session_state[CLEAR_KEY] = True
    if was_oidc:
        st.logout()
