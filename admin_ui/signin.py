"""Sign-in for the app: local accounts, OIDC through ``st.login``, and the localhost demo.

The signed-in :class:`~admin_ui.auth.Identity` lives in ``st.session_state["identity"]``.
"""

from __future__ import annotations

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
from .widgets import md_escape

IDENTITY_KEY = "identity"
SIGNED_OUT_KEY = "_signed_out"


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
    if oidc_configured():
        try:
            logged_in = bool(st.user.is_logged_in)
        except Exception:  # noqa: BLE001
            logged_in = False
        if logged_in:
            accounts, _ = _accounts()
            identity = identity_for_oidc(accounts, st.user.get("email"))
            if identity is not None:
                st.session_state[IDENTITY_KEY] = identity
                return identity
    if not st.session_state.get(SIGNED_OUT_KEY):
        allowed, _ = demo_sign_in_allowed(get_settings().ui.demo_mode, server_address())
        if allowed:
            st.session_state[IDENTITY_KEY] = demo_identity()
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
    for key in list(st.session_state.keys()):
        if not str(key).startswith("$$"):  # Streamlit's own bookkeeping stays
            del st.session_state[key]
    st.session_state[SIGNED_OUT_KEY] = True
    if was_oidc:
        st.logout()


def render_sign_in() -> None:
    """The sign-in page shown to anyone not signed in."""
    st.title("Sign in to agent-memory")
    settings = get_settings()
    accounts, problem = _accounts()
    if problem:
        st.error(md_escape(problem))
    if st.session_state.get(SIGNED_OUT_KEY):
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
                st.session_state.pop(SIGNED_OUT_KEY, None)
                st.session_state[IDENTITY_KEY] = identity
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
                st.session_state.pop(SIGNED_OUT_KEY, None)
                st.session_state[IDENTITY_KEY] = demo_identity()
                st.rerun()
        else:
            st.caption(md_escape(f"Demo sign-in is off: {why}."))
