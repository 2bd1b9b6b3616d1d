"""The server side of signing in: two routes and a middleware added to Streamlit's server at launch.

A Streamlit script cannot set an HttpOnly cookie: it talks to the browser over a websocket, and
only an HTTP response can carry ``Set-Cookie``. ``admin_ui/entry/app.py`` therefore starts the
app as an ``st.App`` with these parts (Streamlit's documented way to add routes and middleware to
its Starlette server), and the page script (``admin_ui/entry/page_script.py``) reaches the same
:class:`SignInStore` through :func:`installed_store`:

- ``POST /_am/session/claim`` (header ``X-Sign-In-Grant``): exchanges a single-use grant the
  script issued for the sign-in's token and sets the cookie ``HttpOnly; SameSite=Strict``, plus
  ``Secure`` when the request came over TLS (Streamlit's own ``server.sslCertFile``, or a proxy
  saying ``X-Forwarded-Proto: https``).
- ``POST /_am/session/clear``: replaces a cookie whose sign-in was signed out (or that this
  server does not know) with the signed-out marker. It never ends a sign-in: the script does that
  on the server (:meth:`SignInStore.end`), so a cross-site or late request can change nothing. A
  cookie whose sign-in ended otherwise (taken as stolen, expired, idle) is kept, because the
  reason is found through it: a reloading tab's old page asks for the clear too, and its request
  can land before the reloaded page has read the cookie (:meth:`SignInStore.clearable`).
- :class:`RotateOnPageLoad`: on each page load (a document request) the cookie's token is
  exchanged for a new one (see :mod:`admin_ui.auth.sign_in_store` for why).

Both routes refuse requests from another site (``Sec-Fetch-Site``/``Origin``). When a sign-in ends,
the Streamlit sessions that showed it are re-run on the server's event loop (captured by the
lifespan below), so every open tab shows the sign-in page without a reload.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memory_core.settings import UISettings

from .sign_in_store import COOKIE_NAME, SIGNED_OUT, SignInStore, is_token

log = logging.getLogger(__name__)

ROUTE_PREFIX = "_am/session"
# Paths that are never page loads (Streamlit's own endpoints and assets, and ours).
_NOT_PAGES = ("_stcore", "static", "media", "component", "app/static", "_am")

_STORE: SignInStore | None = None


def installed_store() -> SignInStore | None:
    """The sign-in store of this server, or None when the app was started without these routes
    (AppTest, or ``streamlit run admin_ui/entry/page_script.py`` directly): sign-ins then last one session."""
    return _STORE


def _base_path() -> str:
    from streamlit import config

    return (config.get_option("server.baseUrlPath") or "").strip("/")


def route_path(name: str) -> str:
    """The URL path of one of the routes (under ``server.baseUrlPath`` when one is set)."""
    return "/" + "/".join(p for p in (_base_path(), ROUTE_PREFIX, name) if p)


def cookie_header(value: str, max_age: float, secure: bool) -> str:
    """The ``Set-Cookie`` value for the session cookie (only tokens and the marker are ever set)."""
    if not (is_token(value) or value == SIGNED_OUT):
        raise ValueError("the session cookie holds a token or the signed-out marker only")
    parts = [f"{COOKIE_NAME}={value}", "Path=/", f"Max-Age={max(int(max_age), 0)}", "HttpOnly", "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def over_tls(scope: dict[str, Any], headers: Headers) -> bool:
    """Whether the browser reached us over TLS (directly, or through a proxy that says so)."""
    forwarded = (headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    return scope.get("scheme") in ("https", "wss") or forwarded == "https"


def same_site_request(headers: Headers) -> bool:
    """Refuse a request another site made the browser send (fetch metadata first, then Origin)."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = headers.get("origin")
    return origin is None or urlsplit(origin).netloc == headers.get("host")


def _cookie_of(headers: Headers) -> str | None:
    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie") or "")
    except Exception:  # noqa: BLE001 - a malformed Cookie header holds no token of ours
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel is not None else None


def _no_store(status: int) -> Response:
    return Response(status_code=status, headers={"Cache-Control": "no-store"})


def make_routes(store: SignInStore) -> list[Route]:
    """The claim and clear routes over ``store``."""

    async def claim(request: Request) -> Response:
        if not same_site_request(request.headers):
            return _no_store(403)
        claimed = store.claim(request.headers.get("x-sign-in-grant"), request.headers.get("user-agent"))
        if claimed is None:
            return _no_store(403)
        token, max_age = claimed
        response = _no_store(204)
        response.headers.append("set-cookie", cookie_header(token, max_age, over_tls(request.scope, request.headers)))
        return response

    async def clear(request: Request) -> Response:
        if not same_site_request(request.headers):
            return _no_store(403)
        response = _no_store(204)
        if store.clearable(_cookie_of(request.headers)):
            response.headers.append("set-cookie", cookie_header(SIGNED_OUT, store.ttl_s, over_tls(request.scope, request.headers)))
        return response

    return [Route(route_path("claim"), claim, methods=["POST"]), Route(route_path("clear"), clear, methods=["POST"])]


class RotateOnPageLoad:
    """ASGI middleware: a page load that carries a live token gets a new one in its response."""

    def __init__(self, app, store: SignInStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET" or not self._page_load(scope):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        token = _cookie_of(headers)
        rotated = self.store.rotate(token, headers.get("user-agent")) if is_token(token) else None
        if rotated is None:
            await self.app(scope, receive, send)
            return
        value = cookie_header(rotated[0], rotated[1], over_tls(scope, headers)).encode("latin-1")

        async def send_with_cookie(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", value)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    @staticmethod
    def _page_load(scope) -> bool:
        headers = Headers(scope=scope)
        dest = headers.get("sec-fetch-dest")
        if dest is not None and dest != "document":
            return False
        if dest is None and "text/html" not in (headers.get("accept") or ""):
            return False
        path = scope.get("path", "").strip("/")
        base = _base_path()
        if base and (path == base or path.startswith(base + "/")):
            path = path[len(base):].strip("/")
        return not any(path == p or path.startswith(p + "/") for p in _NOT_PAGES)


class SessionRerunner:
    """Re-runs Streamlit sessions whose sign-in ended, on the server's event loop (thread-safe)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, session_ids: set[str]) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(_rerun, frozenset(session_ids))


def _rerun(session_ids: frozenset[str]) -> None:
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    runtime = Runtime.instance()
    for session_id in session_ids:
        session = runtime.get_app_session(session_id)
        if session is not None:
            try:
                session.request_rerun(None)
            except Exception:  # noqa: BLE001 - a session closing meanwhile; it is signed out on its next run
                log.warning("could not re-run session %s after its sign-in ended", session_id, exc_info=True)


@dataclass(frozen=True)
class ServerParts:
    """What ``st.App`` is given: routes, middleware, and a lifespan that captures the event loop."""

    store: SignInStore
    routes: list[Route]
    middleware: list[Middleware]
    lifespan: Callable[[Any], Any]


def install(settings: UISettings) -> ServerParts:
    """Build this server's sign-in store and the parts that serve it (``entry/app.py`` calls this once)."""
    global _STORE
    rerunner = SessionRerunner()
    store = SignInStore(ttl_s=settings.session_hours * 3600, idle_s=settings.session_idle_minutes * 60,
                        on_end=rerunner)

    @asynccontextmanager
    async def lifespan(_app) -> AsyncIterator[None]:
        rerunner.loop = asyncio.get_running_loop()
        try:
            yield
        finally:
            rerunner.loop = None

    _STORE = store
    return ServerParts(store, make_routes(store), [Middleware(RotateOnPageLoad, store=store)], lifespan)
