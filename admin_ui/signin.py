"""Sign-in for the app: local accounts, OIDC through ``st.login``, and the localhost demo.

The signed-in :class:`~admin_ui.auth.Identity` lives in ``st.session_state["identity"]`` and, so a
reload or a typed URL never changes who you are, in the server's :class:`SignInStore` under a
token the browser keeps in a cookie (:mod:`admin_ui.sessions`).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from .auth import (
    AccountsError,
    Identity,
    authenticate,
    demo_identity,
    demo_sign_in_allowed,
    identity_for_oidc,
    load_accounts,
)
from .runtime import get_settings
from .sessions import COOKIE_NAME, SIGNED_OUT, SignInStore, cookie_script
from .widgets import md_escape, table

IDENTITY_KEY = "identity"
SIGNED_OUT_KEY = "_signed_out"
TOKEN_KEY = "_signin_token"
EXPIRED_KEY = "_signin_expired"


@st.cache_resource
def sign_in_store() -> SignInStore:
    """The server's one token store (shared by every browser session)."""
    return SignInStore()


def _cookie() -> str | None:
    try:
        value = st.context.cookies.get(COOKIE_NAME)
    except Exception:  # noqa: BLE001 - no browser context (bare scripts)
        return None
    return value if isinstance(value, str) and value else None  # AppTest answers with a mock


def remember(identity: Identity) -> None:
    """Sign ``identity`` in for this session and keep it across reloads."""
    token = sign_in_store().create(identity)
    st.session_state.pop(SIGNED_OUT_KEY, None)
    st.session_state.pop(EXPIRED_KEY, None)
    st.session_state[IDENTITY_KEY] = identity
    st.session_state[TOKEN_KEY] = token


def keep_cookie() -> None:
    """Write this session's token (or the signed-out marker) to the browser cookie.

    Called on every run; the one-line script is ours and holds only a random URL-safe token.
    """
    value = st.session_state.get(TOKEN_KEY) or (SIGNED_OUT if st.session_state.get(SIGNED_OUT_KEY) else None)
    if value and _cookie() != value:
        st.html(cookie_script(value), unsafe_allow_javascript=True)


def _still_valid(identity: Identity) -> bool:
    """A remembered password sign-in holds only while its account keeps the same role."""
    if identity.method != "password":
        return True
    accounts, _ = _accounts()
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


def _accounts():
    try:
        return load_accounts(get_settings().ui.accounts_file), None
    except AccountsError as exc:
        return {}, str(exc)


def server_address() -> str | None:
    return st.get_option("server.address")


def current_identity() -> Identity | None:
    """The signed-in identity, signing in the demo operator or an OIDC user when that applies."""
    identity = st.session_state.get(IDENTITY_KEY)
    if identity is not None:
        return identity
    if st.session_state.get(SIGNED_OUT_KEY):
        return None
    cookie = _cookie()
    remembered = sign_in_store().get(cookie)
    if remembered is not None and _still_valid(remembered):
        st.session_state[IDENTITY_KEY] = remembered
        st.session_state[TOKEN_KEY] = cookie
        return remembered
    if cookie == SIGNED_OUT:  # signed out in an earlier session: no automatic demo sign-in
        st.session_state[SIGNED_OUT_KEY] = True
        return None
    if oidc_configured():
        try:
            logged_in = bool(st.user.is_logged_in)
        except Exception:  # noqa: BLE001
            logged_in = False
        if logged_in:
            accounts, _ = _accounts()
            identity = identity_for_oidc(accounts, st.user.get("email"))
            if identity is not None:
                remember(identity)
                return identity
    if cookie:  # a sign-in this server no longer knows: ask again rather than become someone else
        st.session_state[SIGNED_OUT_KEY] = True
        st.session_state[EXPIRED_KEY] = True
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
    was_oidc = getattr(st.session_state.get(IDENTITY_KEY), "method", None) == "oidc"
    sign_in_store().drop(st.session_state.get(TOKEN_KEY))
    for key in list(st.session_state.keys()):
        if not str(key).startswith("$$"):  # Streamlit's own bookkeeping stays
            del st.session_state[key]
    st.session_state[SIGNED_OUT_KEY] = True
    if was_oidc:
        st.logout()


def render_sign_in(destination: str | None = None) -> None:
    """The sign-in page shown to anyone not signed in (``destination``: the page a deep link asked for)."""
    st.title("Sign in to agent-memory")
    if destination:
        st.caption(md_escape(f"Sign in to open {destination}; you will land there afterwards."))
    settings = get_settings()
    accounts, problem = _accounts()
    if problem:
        st.error(md_escape(problem))
    if st.session_state.get(EXPIRED_KEY):
        st.info("Your earlier sign-in has ended (it expired, the server restarted, or the account changed). "
                "Sign in again.")
    elif st.session_state.get(SIGNED_OUT_KEY):
        st.info("You are signed out.")
    if accounts:
        with st.form("signin_form"):
            username = st.text_input("Username", key="signin_username")
            password = st.text_input("Password", type="password", key="signin_password")
            submitted = st.form_submit_button("Sign in", key="signin_submit", type="primary")
        if submitted:
            identity = authenticate(accounts, username, password)
            if identity is None:
                st.error("Unknown username or wrong password.")
            else:
                remember(identity)
                st.rerun()
    if oidc_configured():
        if st.button("Sign in with your identity provider", key="signin_oidc"):
            st.login()
        if st.user.get("is_logged_in") and current_identity() is None:
            st.error(md_escape(f"{st.user.get('email')} has no role here: ask an admin to add your e-mail to the accounts file."))
    if not accounts and not oidc_configured():
        st.warning("No sign-in is configured. Set MEMORY_UI__ACCOUNTS_FILE to a TOML accounts file "
                   "(see docs/admin-app.md), configure OIDC in .streamlit/secrets.toml, or run the "
                   "demo on localhost with `agent-memory serve --demo`.")
    allowed, why = demo_sign_in_allowed(settings.ui.demo_mode, server_address())
    if settings.ui.demo_mode:
        if allowed:
            if st.button("Continue as the demo operator", key="signin_demo"):
                remember(demo_identity())
                st.rerun()
        else:
            st.caption(md_escape(f"Demo sign-in is off: {why}."))
        if accounts:
            _demo_accounts(accounts, settings.ui.accounts_file)


@st.cache_data(show_spinner=False)
def _published_demo_passwords(path: str) -> dict[str, str]:
    """The docs/demo.md passwords (``<username>-demo-2026``) that really open the packaged accounts."""
    accounts = load_accounts(path)
    guesses = {name: f"{name}-demo-2026" for name in accounts}
    return {name: pw for name, pw in guesses.items() if authenticate(accounts, name, pw) is not None}


def _demo_accounts(accounts: dict, accounts_file) -> None:
    """In demo mode: the accounts one can sign in with, and (for the packaged demo file) their passwords."""
    from memory_core.app_launch import DEMO_ACCOUNTS

    st.subheader("Demo accounts")
    packaged = accounts_file is not None and Path(accounts_file).resolve() == DEMO_ACCOUNTS.resolve()
    passwords = _published_demo_passwords(str(DEMO_ACCOUNTS)) if packaged else {}
    rows = [{"username": a.username, "role": a.role, "memory user": a.user_id or "",
             **({"password": passwords.get(a.username, "")} if packaged else {}),
             "name": a.display_name or ""} for a in accounts.values()]
    table(rows, key="signin_demo_accounts")
    if packaged:
        st.caption("These passwords are published in docs/demo.md: the accounts are for the demo only.")
