"""Store URLs for display."""

from __future__ import annotations


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (for display and logs)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")))
    return url
