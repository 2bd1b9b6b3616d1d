"""The sign-in page: the form, OIDC, the localhost demo, and (in demo mode) the demo accounts.

What signing in does is in :mod:`admin_ui.auth.signin`; this module only draws the page anyone not
signed in sees, at every address (a deep link keeps its page to open afterwards).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from memory_core.app_launch import DEMO_ACCOUNTS

from ..auth.accounts import authenticate, demo_identity, demo_sign_in_allowed, load_accounts
from ..auth.routes import installed_store
from ..auth.signin import (EXPIRED_KEY, SIGNED_OUT_KEY, configured_accounts, current_identity, oidc_configured, remember,
                           server_address)
from ..runtime import get_settings
from .widgets import md_escape, table


def render_sign_in(destination: str | None = None) -> None:
    """The sign-in page shown to anyone not signed in (``destination``: the page a deep link asked for)."""
    st.title("Sign in to agent-memory")
    if destination:
        st.caption(md_escape(f"Sign in to open {destination}; you will land there afterwards if your role may open "
                             "it, else on your first page, with a note saying why."))
    settings = get_settings()
    accounts, problem = configured_accounts()
    if problem:
        st.error(md_escape(problem))
    if st.session_state.get(EXPIRED_KEY):
        st.info(md_escape(f"Sign in again: {st.session_state[EXPIRED_KEY]}."))
    elif st.session_state.get(SIGNED_OUT_KEY):
        st.info("You are signed out.")
    if installed_store() is None:
        st.caption("This server was started without the sign-in routes (the page script alone): a sign-in lasts "
                   "until the page is reloaded. Start it with `agent-memory serve` or `streamlit run admin_ui/entry/app.py`.")
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
    st.subheader("Demo accounts")
    packaged = accounts_file is not None and Path(accounts_file).resolve() == DEMO_ACCOUNTS.resolve()
    passwords = _published_demo_passwords(str(DEMO_ACCOUNTS)) if packaged else {}
    rows = [{"username": a.username, "role": a.role, "memory user": a.user_id or "",
             **({"password": passwords.get(a.username, "")} if packaged else {}),
             "name": a.display_name or ""} for a in accounts.values()]
    table(rows, key="signin_demo_accounts")
    if packaged:
        st.caption("These passwords are published in docs/demo.md: the accounts are for the demo only.")
