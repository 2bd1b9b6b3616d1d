"""The sign-in routes and the rotating middleware, served by a real Starlette app (httpx test client)."""

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from admin_ui.auth import Identity
from admin_ui.auth.routes import RotateOnPageLoad, cookie_header, make_routes
from admin_ui.auth.sign_in_store import COOKIE_NAME, IDLE, REUSED, SIGNED_OUT, SignInStore

CHROME = "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0"
PAGE = {"user-agent": CHROME, "sec-fetch-dest": "document", "sec-fetch-site": "none", "accept": "text/html"}
FETCH = {"user-agent": CHROME, "sec-fetch-site": "same-origin", "sec-fetch-dest": "empty"}


@pytest.fixture
def store():
    return SignInStore()


def client(store, base_url="http://testserver"):
    async def index(request):
        return PlainTextResponse("page")

    app = Starlette(routes=[*make_routes(store), Route("/{path:path}", index)],
                    middleware=[Middleware(RotateOnPageLoad, store=store)])
    return TestClient(app, base_url=base_url)


def claim(http, store, headers=FETCH):
    sign_in = store.start(Identity("rita", "reviewer"), CHROME)
    return sign_in, http.post("/_am/session/claim", headers={**headers, "x-sign-in-grant": store.grant(sign_in.id)})


def attributes(set_cookie: str) -> dict[str, str]:
    parts = [p.strip() for p in set_cookie.split(";")]
    name, _, value = parts[0].partition("=")
    out = {"name": name, "value": value}
    for part in parts[1:]:
        key, _, val = part.partition("=")
        out[key.lower()] = val or "yes"
    return out


def test_the_claim_route_sets_an_httponly_strict_cookie_without_secure_over_plain_http(store):
    with client(store) as http:
        sign_in, response = claim(http, store)
    assert response.status_code == 204 and response.headers["cache-control"] == "no-store"
    cookie = attributes(response.headers["set-cookie"])
    assert cookie["name"] == COOKIE_NAME and cookie["value"] == sign_in.token
    assert cookie["httponly"] == "yes" and cookie["samesite"] == "Strict" and cookie["path"] == "/"
    assert "secure" not in cookie and 0 < int(cookie["max-age"]) <= 12 * 3600


@pytest.mark.parametrize("base_url,extra", [("https://testserver", {}), ("http://testserver", {"x-forwarded-proto": "https"})])
def test_over_tls_the_cookie_is_secure(store, base_url, extra):
    with client(store, base_url) as http:
        _, response = claim(http, store, {**FETCH, **extra})
    assert attributes(response.headers["set-cookie"])["secure"] == "yes"


def test_a_grant_from_another_site_another_browser_or_a_second_time_is_refused(store):
    with client(store) as http:
        _, cross = claim(http, store, {**FETCH, "sec-fetch-site": "cross-site"})
        _, origin = claim(http, store, {"user-agent": CHROME, "origin": "http://evil.example"})
        _, other = claim(http, store, {**FETCH, "user-agent": "curl/8"})
        sign_in = store.start(Identity("rita", "reviewer"), CHROME)
        grant = store.grant(sign_in.id)
        first = http.post("/_am/session/claim", headers={**FETCH, "x-sign-in-grant": grant})
        again = http.post("/_am/session/claim", headers={**FETCH, "x-sign-in-grant": grant})
        get = http.get("/_am/session/claim", headers={**FETCH, "x-sign-in-grant": store.grant(sign_in.id)})
    assert [r.status_code for r in (cross, origin, other, again)] == [403] * 4
    assert all("set-cookie" not in r.headers for r in (cross, origin, other, again))
    assert first.status_code == 204 and "set-cookie" not in get.headers  # only a POST claims


def test_a_page_load_rotates_the_cookie_and_nothing_else_does(store):
    with client(store) as http:
        sign_in, response = claim(http, store)
        token = sign_in.token
        assert store.resume(token, CHROME, "tab").sign_in is sign_in
        http.cookies.set(COOKIE_NAME, token)
        for path, headers in [("/_stcore/health", PAGE), ("/static/js/app.js", PAGE), ("/records", FETCH)]:
            assert "set-cookie" not in http.get(path, headers=headers).headers
        page = http.get("/records?record=mem_1", headers=PAGE)
    rotated = attributes(page.headers["set-cookie"])
    assert page.text == "page" and rotated["value"] != token and rotated["value"] == sign_in.token
    assert rotated["httponly"] == "yes" and rotated["samesite"] == "Strict"


def test_the_clear_route_drops_a_dead_cookie_and_leaves_a_live_one(store):
    with client(store) as http:
        sign_in, _ = claim(http, store)
        http.cookies.set(COOKIE_NAME, sign_in.token)
        live = http.post("/_am/session/clear", headers=FETCH)
        store.end(sign_in.id)
        dead = http.post("/_am/session/clear", headers=FETCH)
        cross = http.post("/_am/session/clear", headers={**FETCH, "sec-fetch-site": "cross-site"})
    assert live.status_code == 204 and "set-cookie" not in live.headers
    cleared = attributes(dead.headers["set-cookie"])
    assert cleared["value"] == SIGNED_OUT and cleared["httponly"] == "yes" and cleared["samesite"] == "Strict"
    assert cross.status_code == 403


@pytest.mark.parametrize("value", ["a;b", "x" * 10, "<script>", "a b"])
def test_the_cookie_only_ever_holds_a_token_or_the_marker(value):
    with pytest.raises(ValueError):
        cookie_header(value, 60, False)


def test_a_late_clear_from_the_owners_old_page_keeps_a_stolen_cookie_so_the_reloaded_page_says_why():
    """The requests of tests/e2e/test_trust.py's copied-cookie test, in the order that lost the reason.

    The owner's reload presents the token the copy replaced: the sign-in ends as stolen and both
    open tabs are re-run. The owner's old page, still open while its reload is in flight, asks the
    clear route to drop the dead cookie before the reloaded page's session reads it.
    """
    told: list[set[str]] = []
    store = SignInStore(on_end=lambda sessions: told.append(set(sessions)))
    with client(store) as owner, client(store) as copy:
        sign_in, _ = claim(owner, store)
        store.bind(sign_in.id, "owner-tab")  # the tab that signed in (remember())
        (held,) = [c for c in owner.cookies.jar if c.name == COOKIE_NAME]
        copy.cookies.set(COOKIE_NAME, held.value, domain=held.domain, path=held.path)  # copied as it is
        copy.get("/", headers=PAGE)  # the copy loads a page: its cookie is rotated...
        assert store.resume(copy.cookies.get(COOKIE_NAME), CHROME, "copy-tab").sign_in is sign_in  # ...and used
        reload = owner.get("/", headers=PAGE)  # the owner's reload: a replaced token, taken as theft
        assert "set-cookie" not in reload.headers and sign_in.ended == REUSED
        assert told == [{"owner-tab", "copy-tab"}]  # both tabs re-run, and each page asks for the clear
        late = owner.post("/_am/session/clear", headers=FETCH)
        copy_clear = copy.post("/_am/session/clear", headers=FETCH)
        assert late.status_code == copy_clear.status_code == 204
        assert "set-cookie" not in late.headers and "set-cookie" not in copy_clear.headers
        # The reloaded page's session presents what the browser now holds: it is told why.
        assert store.resume(owner.cookies.get(COOKIE_NAME), CHROME, "owner-reloaded").reason == REUSED
        assert store.resume(copy.cookies.get(COOKIE_NAME), CHROME, "copy-reloaded").reason == REUSED
        # ... and neither cookie opens anything again.
        assert "set-cookie" not in owner.get("/", headers=PAGE).headers
        assert "set-cookie" not in copy.get("/", headers=PAGE).headers
        assert sign_in.ended == REUSED


def test_the_clear_route_replaces_a_signed_out_or_unknown_cookie_and_keeps_an_expired_one():
    clock = [1000.0]
    store = SignInStore(ttl_s=3600, idle_s=600, clock=lambda: clock[0])
    for value in (SIGNED_OUT, "x" * 43):  # nothing to lose: the marker says as much
        with client(store) as http:
            http.cookies.set(COOKIE_NAME, value)
            assert attributes(http.post("/_am/session/clear", headers=FETCH).headers["set-cookie"])["value"] == SIGNED_OUT
    with client(store) as http:
        sign_in, _ = claim(http, store)
        idle = sign_in.token
        clock[0] += 601
        assert "set-cookie" not in http.post("/_am/session/clear", headers=FETCH).headers  # over, not yet told
        assert store.resume(idle, CHROME, "tab").reason == IDLE
        assert "set-cookie" not in http.post("/_am/session/clear", headers=FETCH).headers  # the reason stays
        assert store.resume(http.cookies.get(COOKIE_NAME), CHROME, "reloaded").reason == IDLE
