"""Downloading memory in the export format (docs/export-format.md) from the app.

A user downloads their own memory: the scopes they own (``user:<id>`` and each agent's private
``agent:<agent>/<id>``), never another's, whatever they ask for. An operator or admin downloads
any scope, with the sessions the records cite if they want. The file is made by the same export
as ``agent-memory export`` (``memory_core.portable.export``), over the service.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memory_core.errors import InvalidInputError, PermissionDeniedError
from memory_core.portable.export import export_lines

from ..auth.accounts import Identity


@dataclass(frozen=True)
class ExportFile:
    """A made export: its file name, bytes and what it holds."""

    name: str
    data: bytes
    scopes: tuple[str, ...]
    records: int
    sessions: int
    made_for: str  # the username it was made for (a file is never offered to another sign-in)


def downloadable_scopes(service, identity: Identity) -> list[str]:
    """The scopes ``identity`` may download: a user's own, or every known scope for an operator."""
    if not identity.can("export"):
        return []
    if identity.role == "user":
        if not identity.user_id:
            return []
        return [s for s in service.known_scopes(identity.user_id) if identity.owns_scope(s)]
    return service.known_scopes()


def make_export(service, identity: Identity, scopes: list[str] | None = None, *, sessions: bool = False) -> ExportFile:
    """The export file of ``scopes`` (None or empty: every scope the identity may download).

    Raises PermissionDeniedError, and makes nothing, when a scope is not the identity's to download
    (the message does not say whether it holds anything), or when sessions are asked for by a user.
    """
    if not identity.can("export"):
        raise PermissionDeniedError(f"the {identity.role} role may not download memory")
    allowed = downloadable_scopes(service, identity)
    chosen = list(dict.fromkeys(scopes or allowed))
    refused = [s for s in chosen if s not in allowed or not identity.owns_scope(s)]
    if refused:
        raise PermissionDeniedError(f"you may not download {refused[0]}", scope=refused[0])
    if sessions and identity.role == "user":
        raise PermissionDeniedError("only an operator downloads sessions with the records")
    if not chosen:
        raise InvalidInputError("there is no memory to download yet", field="scopes")
    lines = list(export_lines(service, scopes=chosen, sessions=sessions))
    end = _end_counts(lines[-1])
    owner = identity.user_id if identity.role == "user" else "scopes"
    stamp = service.clock.now().strftime("%Y%m%dT%H%M%SZ")
    return ExportFile(f"agent-memory-{owner}-{stamp}.jsonl", "".join(lines).encode("utf-8"), tuple(chosen),
                      end.get("records", 0), end.get("sessions", 0), identity.username)


def _end_counts(line: str) -> dict:
    try:
        data = json.loads(line)
    except ValueError:
        return {}
    return data if data.get("kind") == "end" else {}
