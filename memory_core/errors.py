"""Errors raised by memory_core.

Every error carries a stable ``code`` that tool handlers copy into the structured error a model
reads, plus a human message and optional context ``details``.
"""

from __future__ import annotations

from typing import Any


class MemoryCoreError(Exception):
    """Base class for every error memory_core raises on purpose."""

    code = "memory_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The structured form returned to a model or shown in the UI."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class InvalidInputError(MemoryCoreError):
    """A tool argument or API argument is malformed."""

    code = "invalid_input"


class UnknownToolError(MemoryCoreError):
    """A tool name that the service does not offer."""

    code = "unknown_tool"


class NotFoundError(MemoryCoreError):
    """A record, entity or run does not exist or is not visible to the caller."""

    code = "not_found"


class PermissionDeniedError(MemoryCoreError):
    """The principal lacks the grant an operation needs."""

    code = "permission_denied"


class PolicyError(MemoryCoreError):
    """An operation the access or lifecycle policy refuses (e.g. a grant on a private scope)."""

    code = "policy_refused"


class ConflictError(MemoryCoreError):
    """The store's state does not allow the operation (e.g. revising a deleted record)."""

    code = "conflict"


class EmbedderMismatchError(MemoryCoreError):
    """The store's rows were embedded with a different model than the one configured."""

    code = "embedder_mismatch"


class EmbedderUnavailableError(MemoryCoreError):
    """The configured embedding model could not be loaded."""

    code = "embedder_unavailable"


class SessionClosedError(MemoryCoreError):
    """A tool call or turn arrived on a session that has already ended."""

    code = "session_closed"


class MigrationError(MemoryCoreError):
    """The database schema is newer than this code or a migration failed."""

    code = "migration_failed"


class ExternalServiceError(MemoryCoreError):
    """A configured hosted model (Anthropic or OpenAI-compatible) failed, timed out or answered invalidly."""

    code = "external_service"


class IdentityError(MemoryCoreError):
    """A framework run context lacks (or contradicts) the agent, user or session id an adapter needs."""

    code = "identity_missing"


class FrameworkUnavailableError(MemoryCoreError):
    """An adapter's agent framework is not installed in this environment."""

    code = "framework_unavailable"


class MissingExtraError(MemoryCoreError, ModuleNotFoundError):
    """An optional part needs a package that is not installed; the message names the extra to install.

    Also a ModuleNotFoundError, so code that treats a missing optional part as absent (``except
    ImportError``, ``pytest.importorskip``) keeps doing so."""

    code = "missing_extra"


class HostMemoryNotQualifiedError(MemoryCoreError):
    """Host-issued memory was enabled without a passing fitness result for exactly what the host runs."""

    code = "host_memory_not_qualified"
