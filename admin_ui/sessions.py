"""Sign-ins that survive a reload: a random token in a browser cookie, the identity on the server.

Streamlit starts a new session on every reload or typed URL, so an identity kept only in
``st.session_state`` is lost (and in demo mode the person silently became the demo operator
again). After a sign-in the app stores the identity here under a random token and sets the
token as a cookie; a new session reads the cookie (``st.context.cookies``) and looks the token
up. Tokens live in the server process only: a restart signs everybody out, which is the safe
direction. Signing out drops the token and leaves a "signed out" marker in the cookie, so a
reload after signing out shows the sign-in page instead of signing the demo operator back in.
Nothing here touches Streamlit, so it is unit-tested directly.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass

from .auth import Identity

COOKIE_NAME = "agent_memory_session"
SIGNED_OUT = "signed-out"
DEFAULT_TTL_S = 12 * 3600


@dataclass
class _Entry:
    identity: Identity
    expires: float


class SignInStore:
    """Token → identity for the server process, with an expiry; safe across threads."""

    def __init__(self, ttl_s: float = DEFAULT_TTL_S, clock=time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def create(self, identity: Identity) -> str:
        """A new token for ``identity`` (43 URL-safe characters, 256 random bits)."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._purge()
            self._entries[token] = _Entry(identity, self._clock() + self.ttl_s)
        return token

    def get(self, token: str | None) -> Identity | None:
        """The identity for ``token``, or None if it is unknown, expired or the signed-out marker."""
        if not token or token == SIGNED_OUT:
            return None
        with self._lock:
            entry = self._entries.get(token)
            if entry is None:
                return None
            if entry.expires <= self._clock():
                del self._entries[token]
                return None
            return entry.identity

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._entries.pop(token or "", None)

    def _purge(self) -> None:
        now = self._clock()
        for token in [t for t, e in self._entries.items() if e.expires <= now]:
            del self._entries[token]


def cookie_script(value: str, ttl_s: int = DEFAULT_TTL_S) -> str:
    """The one line of JavaScript that stores ``value`` (a token or the marker) in the cookie."""
    if not all(ch.isalnum() or ch in "-_" for ch in value):
        raise ValueError("cookie values are URL-safe tokens only")
    return (f"<script>document.cookie = '{COOKIE_NAME}={value}; path=/; max-age={int(ttl_s)}; SameSite=Strict';"
            f"</script>")
