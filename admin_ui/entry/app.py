"""agent-memory admin app: ``agent-memory serve`` (or ``streamlit run admin_ui/entry/app.py``).

This file starts the server; the page script is ``page_script.py`` beside it. The app runs as an
``st.App`` so the server itself can set the sign-in cookie (HttpOnly, SameSite=Strict, Secure over
TLS): Streamlit scripts talk to the browser over a websocket and cannot send ``Set-Cookie``. The
routes, the middleware that rotates the cookie on each page load, and the sign-in store they share
with the script are in ``admin_ui/auth/routes.py`` (see docs/admin-app.md). Streamlit imports this
file by its bare name, so its imports are absolute.
"""

from pathlib import Path

import streamlit as st

from admin_ui.auth.routes import install
from memory_core import load_settings

_parts = install(load_settings().ui)
app = st.App(Path(__file__).resolve().parent / "page_script.py", routes=_parts.routes, middleware=_parts.middleware,
             lifespan=_parts.lifespan)
