"""Which pages each role gets (``st.navigation``), and the sidebar identity box."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from .auth import Identity
from .signin import sign_out

ROOT = Path(__file__).resolve().parent.parent
PAGES_DIR = ROOT / "pages"

# (file, title, icon, url path, permission needed to see the page)
PAGES = [
    ("overview.py", "Overview", ":material/dashboard:", "overview", "view_store"),
    ("search_explorer.py", "Search explorer", ":material/manage_search:", "search", "search"),
    ("records.py", "Records", ":material/description:", "records", None),
    ("review_queue.py", "Review queue", ":material/fact_check:", "review", "view_store"),
    ("grants.py", "Grants", ":material/key:", "grants", "view_store"),
    ("entities.py", "Entities", ":material/hub:", "entities", "view_store"),
    ("extraction.py", "Extraction", ":material/auto_awesome:", "extraction", "view_store"),
    ("logs.py", "Logs", ":material/receipt_long:", "logs", "view_store"),
]


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
    return [
        st.Page(str(PAGES_DIR / file), title=title, icon=icon, url_path=url, default=(i == 0))
        for i, (file, title, icon, url) in enumerate(page_specs(identity))
    ]


def sidebar(identity: Identity) -> None:
    with st.sidebar:
        st.caption("Signed in as")
        st.text(identity.label)
        if identity.method == "demo":
            st.caption("Demo mode: signed in automatically on localhost.")
        if st.button("Sign out", key="signout"):
            sign_out()
            st.rerun()
