"""Which pages each role gets (``st.navigation``), where the page scripts are, and the sidebar identity box."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ..auth.accounts import Identity
from ..auth.signin import sign_out
from .sign_in_page import render_sign_in
from .widgets import flash

PACKAGE = Path(__file__).resolve().parents[1]
# The page scripts: pages/ at the top of a checkout, admin_ui/pages/ in an installed wheel
# (setup.py maps one onto the other). Neither sits beside the script Streamlit runs
# (admin_ui/entry/): Streamlit treats a pages/ folder there as a v1 multipage app until the first
# st.navigation call, so the first request after a server start could run a page script directly
# and list every page in the sidebar to someone not signed in.
PAGES_DIR = PACKAGE / "pages" if (PACKAGE / "pages").is_dir() else PACKAGE.parent / "pages"
# Served from our own files: an emoji or material-icon favicon makes the browser fetch it elsewhere.
FAVICON = str(PACKAGE / "static" / "favicon.png")

# (file, title, icon, url path, permission needed to see the page)
PAGES = [
    ("overview.py", "Overview", ":material/dashboard:", "overview", "view_store"),
    ("search_explorer.py", "Search explorer", ":material/manage_search:", "search", "search"),
    ("records.py", "Records", ":material/description:", "records", None),
    ("review_queue.py", "Review queue", ":material/fact_check:", "review", "view_store"),
    ("grants.py", "Grants", ":material/key:", "grants", "view_store"),
    ("keys.py", "Keys", ":material/vpn_key:", "keys", "grant"),  # the MCP server's API keys (docs/mcp.md): operators
    ("entities.py", "Entities", ":material/hub:", "entities", "view_store"),
    ("extraction.py", "Extraction", ":material/auto_awesome:", "extraction", "view_store"),
    ("logs.py", "Logs", ":material/receipt_long:", "logs", "view_store"),
    ("session_context.py", "Session context", ":material/visibility:", "context", "view_store"),
    ("agent_view.py", "What an agent sees", ":material/smart_toy:", "agent", "view_store"),
    ("ambient_profile.py", "Ambient profile", ":material/tune:", "profile", None),
]


def page_path(file: str) -> str:
    """The full path of a page script, as ``st.switch_page`` and ``st.page_link`` take it."""
    return str(PAGES_DIR / file)


def page_specs(identity: Identity) -> list[tuple[str, str, str, str]]:
    """The pages ``identity`` may open, in menu order (the user role gets only its own records)."""
    out = []
    for file, title, icon, url, permission in PAGES:
        if permission is None or identity.can(permission):
            if identity.role == "user" and file == "records.py":
                title = "My memory"
            out.append((file, title, icon, url))
    return out


def build_pages(identity: Identity) -> list:
    """The menu for ``identity``, plus hidden pages saying why the other addresses are closed to it."""
    specs = page_specs(identity)
    pages = [st.Page(page_path(file), title=title, icon=icon, url_path=url) for file, title, icon, url in specs]
    # Streamlit serves the default page at "/" and answers "page not found" at its own address, so
    # the default is a hidden page that moves on to the first real one: every page keeps a
    # working address (permalinks), and "/" still opens the first page of the menu.
    home = st.Page(_forward(pages[0], None), title="Home", url_path="home", default=True, visibility="hidden")
    open_urls = {url for *_, url in specs}
    closed = [st.Page(_forward(pages[0], f"Your role ({identity.role}) cannot open {title}."), title=title, icon=icon,
                      url_path=url, visibility="hidden")
              for file, title, icon, url, _ in PAGES if url not in open_urls]
    return [home, *pages, *closed]


def _forward(page, message: str | None):
    def render() -> None:
        if message:
            flash(message, "info")
        st.switch_page(page, query_params=st.query_params.to_dict())
    return render


def sign_in_pages() -> list:
    """The sign-in form at its own address and, hidden, at every page's address (deep links)."""
    pages = [st.Page(render_sign_in, title="Sign in", icon=":material/login:", url_path="sign-in", default=True)]
    for _, title, icon, url, _ in PAGES:
        pages.append(st.Page(_sign_in_for(url, title), title=f"Sign in: {title}", icon=icon, url_path=url,
                             visibility="hidden"))
    return pages


def _sign_in_for(url: str, title: str):
    def render() -> None:
        render_sign_in(destination=title)
    render.__name__ = f"sign_in_{url}"
    return render


def sidebar(identity: Identity) -> None:
    """Who is signed in, and the Sign out button."""
    with st.sidebar:
        st.caption("Signed in as")
        st.text(identity.label)
        if identity.method == "demo":
            st.caption("Demo mode: signed in automatically on localhost.")
        if st.button("Sign out", key="signout"):
            sign_out()
            st.rerun()
