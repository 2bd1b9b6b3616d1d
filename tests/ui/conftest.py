"""AppTest fixtures: a small store per test, built with the hashing embedder, and signed-in roles."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from admin_ui.auth import Identity
from admin_ui.runtime import CLOCK_ENV, EMBEDDER_ENV, STORE_ENV
from tests.ui import store_builder

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "admin_ui" / "entry" / "page_script.py")  # the page script (entry/app.py serves it)
PAGES = ROOT / "pages"


def page_file(name: str) -> str:
    """A page script's path as ``AppTest.switch_page`` takes it (pages/ is not beside the page script)."""
    return str(PAGES / name)


@pytest.fixture(scope="session")
def template_store(tmp_path_factory):
    """Built once; each test gets its own copy so actions do not leak between tests."""
    path = tmp_path_factory.mktemp("ui-template") / "template.sqlite"
    ids = store_builder.build(path)
    return path, ids


@pytest.fixture
def ui_store(template_store, tmp_path, monkeypatch):
    source, ids = template_store
    path = tmp_path / "ui.sqlite"
    shutil.copy(source, path)
    monkeypatch.setenv(STORE_ENV, str(path))
    monkeypatch.setenv(EMBEDDER_ENV, "tests.fakes:HashingEmbedder")
    monkeypatch.setenv(CLOCK_ENV, store_builder.NOW)
    monkeypatch.delenv("MEMORY_UI__DEMO_MODE", raising=False)
    monkeypatch.delenv("MEMORY_UI__ACCOUNTS_FILE", raising=False)
    return path, ids


ROLES = {
    "viewer": Identity("vera", "viewer"),
    "reviewer": Identity("rita", "reviewer"),
    "operator": Identity("omar", "operator"),
    "admin": Identity("ada", "admin"),
    "user": Identity("alice", "user", user_id="alice"),
}


@pytest.fixture
def open_page(ui_store):
    """``open_page("records.py", role="operator")`` → an AppTest showing that page, signed in."""

    def opener(page: str, role: str = "operator", identity: Identity | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=30)
        at.session_state["identity"] = identity or ROLES[role]
        at.run()
        at.switch_page(page_file(page)).run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return opener


def service_for(at):
    """The app's cached service for the current test store (the object the pages use)."""
    from admin_ui.runtime import get_service

    return get_service()


def frames_with(at, *columns: str):
    """The dataframes on the page that have every one of ``columns``."""
    return [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]


def unescape(text: str) -> str:
    """Markdown backslash escapes removed: what the reader sees."""
    return re.sub(r"\\(.)", r"\1", text)


def shown_text(at) -> list[str]:
    """Every text, code, caption, markdown and alert body on the page, as the reader sees it."""
    out = []
    for group in (at.text, at.code, at.caption, at.markdown, at.error, at.warning, at.info, at.success):
        out.extend(unescape(str(e.value)) for e in group)
    return out


def errors(at) -> str:
    return " ".join(unescape(e.value) for e in at.error)
