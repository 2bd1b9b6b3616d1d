"""Sign-ins kept on the server, reached by an HttpOnly cookie the server itself sets.

Streamlit starts a new session on every reload or typed URL, so a sign-in kept only in
``st.session_state`` would be lost. A *sign-in* lives here, in the server process; the browser
holds a random token for it in the ``agent_memory_session`` cookie. Page JavaScript never sees
that token: the cookie is set by the server's own routes (:mod:`admin_ui.auth.routes`), with
``HttpOnly``, ``SameSite=Strict`` and, over TLS, ``Secure``. How a token gets there:

1. A password, OIDC or demo sign-in in a Streamlit session calls :meth:`SignInStore.start` and
   :meth:`~SignInStore.grant`: a single-use grant, valid for a minute and for this browser only.
2. The page posts the grant to ``/_am/session/claim``; the route exchanges it
   (:meth:`~SignInStore.claim`) for the first token and sets the cookie.
3. Every page load (a document request) exchanges the token for a new one
   (:meth:`~SignInStore.rotate`), and the Streamlit session that load opens presents the new one
   (:meth:`~SignInStore.resume`), which confirms it.

A copied cookie value is therefore not enough on its own, as far as a server-only design allows:

- it is refused in a browser whose User-Agent differs from the one that signed in (a cheap check
  that anyone who copies the header as well gets past; it stops a plain copy into another browser);
- it stops working at the next page load of the browser it was copied from, and if both copies
  are used, a token that was already replaced is presented again: that is taken as theft and the
  sign-in ends for everybody holding it (every tab, both browsers);
- it lasts at most ``ui.session_hours`` and ends after ``ui.session_idle_minutes`` without a
  click or keypress in the app.

It is not bound to a key the browser cannot export (that needs device-bound credentials, which
browsers do not offer to a plain web app yet), so a thief who copies the cookie and the
User-Agent and uses them before the owner's next page load has the sign-in until then.

Signing out ends the sign-in here (:meth:`~SignInStore.end`): every Streamlit session bound to
it is told (``on_end``), so every open tab of every browser that held it shows the sign-in page
without a reload, and the page then asks ``/_am/session/clear`` to replace the dead cookie with
the signed-out marker (the route never ends a sign-in itself, so a late call from a stale tab
cannot end a newer one). A cookie whose sign-in ended for another reason (taken as stolen, expired,
idle) is left as it is (:meth:`~SignInStore.clearable`): the server finds the reason through it, so
every later page load of that browser can still say why. Tokens live in this process only: a
restart signs everybody out, which is the safe direction. Nothing here touches Streamlit, so it is
unit-tested directly.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .accounts import Identity

COOKIE_NAME = "agent_memory_session"
SIGNED_OUT = "signed-out"  # the cookie's value after signing out (no automatic demo sign-in then)
DEFAULT_TTL_S = 12 * 3600
DEFAULT_IDLE_S = 3600
GRANT_TTL_S = 60.0

# Why a presented token found no sign-in (shown on the sign-in page).
SIGNED_OUT_REASON = "signed out"
REUSED = "a sign-in cookie that had already been replaced was presented again (a copy of it is in use elsewhere)"
OTHER_BROWSER = "the cookie belongs to another browser"
UNKNOWN = "the server does not know this sign-in (it expired, or the server restarted)"
EXPIRED = "the sign-in expired"
IDLE = "the sign-in was idle too long"


def browser_key(user_agent: str | None) -> str:
    """What a sign-in is bound to: a digest of the browser's User-Agent header."""
    return hashlib.sha256((user_agent or "").encode("utf-8", "replace")).hexdigest()


def is_token(value: object) -> bool:
    """Whether ``value`` looks like a token or grant this module issues (URL-safe, 43 characters)."""
    return isinstance(value, str) and len(value) == 43 and all(ch.isalnum() or ch in "-_" for ch in value)


@dataclass
class SignIn:
    """One sign-in: who, for which browser, which token the browser holds, which sessions show it."""

    id: str
    identity: Identity
    browser: str
    expires: float
    last_active: float
    token: str | None = None
    confirmed: bool = False  # the current token has come back from the browser at least once
    previous: str | None = None  # the token it replaced; accepted again until ``token`` is confirmed
    sessions: set[str] = field(default_factory=set)
    ended: str | None = None


@dataclass(frozen=True)
class Resumed:
    """The answer to a presented token: the sign-in, or why there is none."""

    sign_in: SignIn | None
    reason: str | None = None


class SignInStore:
    """Sign-ins of this server process, with their tokens and grants; safe across threads.

    ``on_end(session_ids)`` is called (outside the lock) when a sign-in ends, with the Streamlit
    sessions that showed it, so they can be re-run and show the sign-in page.
    """

    def __init__(self, ttl_s: float = DEFAULT_TTL_S, idle_s: float = DEFAULT_IDLE_S, clock=time.monotonic,
                 on_end: Callable[[set[str]], None] | None = None) -> None:
        self.ttl_s, self.idle_s = ttl_s, idle_s
        self.on_end = on_end
        self._clock = clock
        self._lock = threading.Lock()
        self._sign_ins: dict[str, SignIn] = {}
        self._tokens: dict[str, str] = {}  # every token ever issued (current, previous, retired) → sign-in id
        self._grants: dict[str, tuple[str, str, float]] = {}  # grant → (sign-in id, browser, expiry)

    # -- signing in ---------------------------------------------------------------------------

    def start(self, identity: Identity, user_agent: str | None) -> SignIn:
        """A new sign-in for ``identity`` in the browser that sent ``user_agent`` (no token yet)."""
        now = self._clock()
        sign_in = SignIn(secrets.token_urlsafe(32), identity, browser_key(user_agent), now + self.ttl_s, now)
        with self._lock:
            self._purge(now)
            self._sign_ins[sign_in.id] = sign_in
        return sign_in

    def grant(self, sign_in_id: str) -> str:
        """A single-use grant the page exchanges for the cookie (``/_am/session/claim``)."""
        grant = secrets.token_urlsafe(32)
        with self._lock:
            sign_in = self._sign_ins[sign_in_id]
            self._grants[grant] = (sign_in_id, sign_in.browser, self._clock() + GRANT_TTL_S)
        return grant

    def grant_pending(self, grant: str | None) -> bool:
        """Whether ``grant`` is still waiting to be claimed (the page keeps posting it until then)."""
        with self._lock:
            held = self._grants.get(grant or "")
            return held is not None and held[2] > self._clock()

    def claim(self, grant: str | None, user_agent: str | None) -> tuple[str, float] | None:
        """Exchange a grant for the sign-in's first token: ``(token, seconds it may live)``, or None."""
        now = self._clock()
        with self._lock:
            held = self._grants.pop(grant or "", None)
            if held is None or held[2] <= now or held[1] != browser_key(user_agent):
                return None
            sign_in = self._sign_ins.get(held[0])
            if sign_in is None or self._over(sign_in, now):
                return None
            token = self._new_token(sign_in)
            return token, sign_in.expires - now

    # -- a browser coming back ----------------------------------------------------------------

    def rotate(self, token: str | None, user_agent: str | None) -> tuple[str, float] | None:
        """On a page load: a new token for the sign-in ``token`` opens (and its lifetime), or None."""
        ended: set[str] = set()
        try:
            with self._lock:
                sign_in, ended = self._find(token, user_agent)
                if sign_in is None:
                    return None
                now = self._clock()
                if token == sign_in.previous:  # a second load before the browser used the new token
                    return sign_in.token, sign_in.expires - now
                sign_in.last_active = now
                return self._new_token(sign_in), sign_in.expires - now
        finally:
            self._notify(ended)

    def resume(self, token: str | None, user_agent: str | None, session_id: str | None) -> Resumed:
        """A new Streamlit session presents the browser's cookie: its sign-in (bound to the session), or why not."""
        if not token or token == SIGNED_OUT:
            return Resumed(None, SIGNED_OUT_REASON if token == SIGNED_OUT else None)
        ended: set[str] = set()
        try:
            with self._lock:
                sign_in, ended = self._find(token, user_agent)
                if sign_in is None:
                    return Resumed(None, self._why(token, user_agent))
                if token == sign_in.token:
                    sign_in.confirmed = True
                sign_in.last_active = self._clock()
                if session_id:
                    sign_in.sessions.add(session_id)
                return Resumed(sign_in)
        finally:
            self._notify(ended)

    # -- while signed in ----------------------------------------------------------------------

    def bind(self, sign_in_id: str, session_id: str | None) -> None:
        """Remember that Streamlit session ``session_id`` shows this sign-in (told when it ends)."""
        with self._lock:
            sign_in = self._sign_ins.get(sign_in_id)
            if sign_in is not None and session_id:
                sign_in.sessions.add(session_id)

    def check(self, sign_in_id: str | None, *, active: bool = True) -> Resumed:
        """Is the sign-in still on? ``active`` counts this as activity (a person's click or keypress)."""
        ended: set[str] = set()
        try:
            with self._lock:
                sign_in = self._sign_ins.get(sign_in_id or "")
                if sign_in is None:
                    return Resumed(None, UNKNOWN)
                if sign_in.ended:
                    return Resumed(None, sign_in.ended)
                now = self._clock()
                if self._over(sign_in, now):
                    ended = self._end(sign_in, EXPIRED if sign_in.expires <= now else IDLE)
                    return Resumed(None, sign_in.ended)
                if active:
                    sign_in.last_active = now
                return Resumed(sign_in)
        finally:
            self._notify(ended)

    def end(self, sign_in_id: str | None, reason: str = SIGNED_OUT_REASON, *, here: str | None = None) -> set[str]:
        """End a sign-in everywhere; the sessions that showed it (except ``here``, the session
        signing out, which redraws itself) are reported to ``on_end`` and returned."""
        with self._lock:
            sign_in = self._sign_ins.get(sign_in_id or "")
            ended = self._end(sign_in, reason) if sign_in is not None and not sign_in.ended else set()
        ended.discard(here or "")
        self._notify(ended)
        return ended

    def live(self, token: str | None) -> bool:
        """Whether ``token`` still opens a sign-in."""
        with self._lock:
            sign_in = self._sign_ins.get(self._tokens.get(token or "", ""))
            return sign_in is not None and not sign_in.ended and not self._over(sign_in, self._clock())

    def clearable(self, token: str | None) -> bool:
        """Whether the clear route may replace the cookie ``token`` with the signed-out marker.

        Only when the marker loses nothing: the token opens no sign-in this server knows, or its
        sign-in was signed out. A live cookie stays, and so does one whose sign-in ended for
        another reason (taken as stolen, expired, idle), because the next page load finds that
        reason through it. The clear is asked for by every page that showed the sign-in, and the
        one still open while its tab reloads can land before the reloaded page has read the cookie.
        """
        with self._lock:
            sign_in = self._sign_ins.get(self._tokens.get(token or "", ""))
            return sign_in is None or sign_in.ended == SIGNED_OUT_REASON  # live or over-but-not-ended: kept

    # -- internals (called with the lock held) -------------------------------------------------

    def _new_token(self, sign_in: SignIn) -> str:
        token = secrets.token_urlsafe(32)
        sign_in.previous = sign_in.token
        sign_in.token, sign_in.confirmed = token, False
        self._tokens[token] = sign_in.id
        return token

    def _find(self, token: str | None, user_agent: str | None) -> tuple[SignIn | None, set[str]]:
        """The live sign-in ``token`` may open; a replaced token presented again ends it (theft)."""
        sign_in = self._sign_ins.get(self._tokens.get(token or "", ""))
        if sign_in is None or sign_in.ended:
            return None, set()
        now = self._clock()
        if self._over(sign_in, now):
            return None, self._end(sign_in, EXPIRED if sign_in.expires <= now else IDLE)
        if sign_in.browser != browser_key(user_agent):
            return None, set()
        if token == sign_in.token or (token == sign_in.previous and not sign_in.confirmed):
            return sign_in, set()
        return None, self._end(sign_in, REUSED)

    def _why(self, token: str, user_agent: str | None) -> str:
        sign_in = self._sign_ins.get(self._tokens.get(token, ""))
        if sign_in is None:
            return UNKNOWN
        if sign_in.ended:
            return sign_in.ended
        return OTHER_BROWSER if sign_in.browser != browser_key(user_agent) else UNKNOWN

    def _over(self, sign_in: SignIn, now: float) -> bool:
        return sign_in.expires <= now or sign_in.last_active + self.idle_s <= now

    def _end(self, sign_in: SignIn, reason: str) -> set[str]:
        sign_in.ended = reason
        sessions, sign_in.sessions = sign_in.sessions, set()
        return sessions

    def _notify(self, sessions: set[str]) -> None:
        if sessions and self.on_end is not None:
            self.on_end(sessions)

    def _purge(self, now: float) -> None:
        """Forget sign-ins past their lifetime (an ended one is kept until then, to say why)."""
        gone = {sid for sid, s in self._sign_ins.items() if s.expires <= now}
        for sid in gone:
            del self._sign_ins[sid]
        if gone:
            self._tokens = {t: sid for t, sid in self._tokens.items() if sid not in gone}
        self._grants = {g: held for g, held in self._grants.items() if held[2] > now}
