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
    """A run names no usable principal or session, or one that contradicts the session's owner.

    The one class a host catches for identity refusals (SessionOwnerError is a subclass)."""

    code = "identity_missing"


class SessionOwnerError(IdentityError, PolicyError):
    """A session id that belongs to another principal (agent, user) than the one the caller names.

    An identity refusal: hosts catch it as IdentityError, the one class for every identity refusal;
    it stays a PolicyError so code that caught the store's earlier PolicyError keeps working.
    """

    code = "session_owner_mismatch"


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


class StoreUnusableError(MemoryCoreError):
    """The store at ``path`` cannot be opened as it is (``problem``: missing, empty, damaged, not_a_store,
    outdated or incomplete); the message says what to do."""

    code = "store_unusable"

    def __init__(self, message: str, *, path: str, problem: str, **details: Any) -> None:
        super().__init__(message, path=path, problem=problem, **details)
        self.path = path
        self.problem = problem
