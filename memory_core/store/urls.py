"""Store targets as text: URLs for display, file paths checked as file paths, SQLite ``file:`` URIs.

A store target is a file path or a ``postgresql://`` URL (:mod:`.backend`). Where only a file can
be meant (a backup, a scratch copy, the demo store, a report to write), :func:`file_path` refuses a
URL instead of letting ``Path()`` turn ``postgresql://u@/db`` into the relative folder
``postgresql:/u@/db`` and building a store there. :func:`sqlite_uri` percent-escapes a path for
SQLite's URI syntax, in which ``?`` starts the parameters, ``#`` a fragment and ``%`` an escape: an
unescaped ``file:{path}?mode=ro`` opens (and may create) another file when the path holds one of them.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, urlencode

from ..errors import InvalidInputError

# "scheme://..." and the form Path() leaves of it ("scheme:/..."), plus the schemes people paste
# without slashes. A relative file whose first folder ends in ":" can still be given as "./name:/...".
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
_SCHEMES = ("postgresql:", "postgres:", "file:", "sqlite:", "http:", "https:")


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (for display and logs)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
    return url


def looks_like_url(target: str | Path) -> bool:
    """True for text that names a URL (``scheme://...``, or what ``Path()`` leaves of one), not a file."""
    text = str(target)
    return bool(_URL.match(text)) or text.lower().startswith(_SCHEMES)


def file_path(target: str | Path, *, field: str = "path", what: str = "a file") -> Path:
    """``target`` as a file path; a URL is refused with an :class:`InvalidInputError` saying so."""
    if looks_like_url(target):
        shown = redact_url(str(target))
        hint = ""
        if shown.lower().startswith(("postgresql:", "postgres:")):
            hint = ("; a PostgreSQL URL is not taken here" if "://" in shown else
                    "; this looks like a PostgreSQL URL that lost a slash (they start with postgresql://)")
        raise InvalidInputError(f"{field} must be {what}, and {shown!r} is a URL{hint} (a file whose folder name "
                                "ends in ':' can be given as ./name)", field=field)
    return Path(target)


def sqlite_uri(path: str | Path, **params: str) -> str:
    """A ``file:`` URI for the SQLite file at ``path`` (absolute, percent-escaped) with ``params``
    (``mode="ro"``...), for ``sqlite3.connect(uri, uri=True)`` and ``VACUUM INTO``."""
    absolute = Path(path).absolute()
    uri = "file://" + quote(str(absolute), safe="/")
    return uri + ("?" + urlencode(params) if params else "")
