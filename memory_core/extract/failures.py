"""Why an extraction attempt failed, in words a person can act on, and whether trying again can help.

A failure another attempt may cure (a model timeout, an API error, a reply that did not parse, a
busy store) leaves the run queued for its next attempt, up to ``extraction.max_attempts``. One that
would recur identically (a bug, a session that no longer exists, a model that is not configured)
marks the run failed at once: retrying it would only repeat the failure. Either way the run's
error says what happened, where (which part of the transcript), and what to change; Retry in the
app (or ``service.retry_extraction``) gives a failed run one more attempt.
"""

from __future__ import annotations

from pydantic import ValidationError

from ..errors import ExternalServiceError, MemoryCoreError

# Kinds of ExternalServiceError another attempt may cure.
TRANSIENT_KINDS = frozenset({"timeout", "api_error", "connection", "invalid_response", "invalid_output",
                             "output_too_large"})


def retryable(exc: BaseException) -> bool:
    """Whether another attempt could succeed where this one failed."""
    if isinstance(exc, ExternalServiceError):
        return exc.details.get("kind") in TRANSIENT_KINDS
    if isinstance(exc, MemoryCoreError):
        return False
    # sqlite3 and psycopg both call a locked, busy or lost database an OperationalError.
    # An OSError (a full disk, a lost network mount) may be gone by the next attempt too.
    return isinstance(exc, OSError) or type(exc).__name__ == "OperationalError"


def _schema_problems(exc: BaseException) -> str | None:
    cause = exc.__cause__
    while cause is not None and not isinstance(cause, ValidationError):  # a model client may wrap it once more
        cause = cause.__cause__
    if cause is None:
        return None
    problems = [f"{'.'.join(str(p) for p in e['loc']) or '(reply)'}: {e['msg']}" for e in cause.errors(include_url=False)[:3]]
    more = len(cause.errors()) - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def describe(stage: str, exc: BaseException, part: str | None = None) -> str:
    """One or two sentences: what failed, where, and what a person can do about it."""
    where = f" on {part}" if part else ""
    component = "reviewer" if stage == "review" else "extractor"
    if isinstance(exc, ExternalServiceError):
        kind = exc.details.get("kind")
        if kind == "timeout":
            return (f"the {component}'s model request timed out{where}. Raise extraction.{component}_timeout_s"
                    + (", or lower extraction.part_max_chars so each request is smaller." if component == "extractor" else "."))
        if kind == "invalid_response":
            return (f"the model server's answer{where} was not a chat completion ({exc.message}). Check the base URL "
                    "points at an OpenAI-compatible API.")
        if kind == "connection":
            return f"the model server could not be reached{where} ({exc.message}). Check that it is running and the base URL."
        if kind == "api_error":
            return f"the model API failed{where} ({exc.message}). Check the API key, its quota and the base URL."
        if kind == "invalid_output":
            problems = _schema_problems(exc)
            return (f"the {component}'s model reply{where} was not valid output ({problems or exc.message}). "
                    "Another attempt may succeed; if it keeps failing, lower extraction.part_max_chars or use another model.")
        if kind == "output_too_large":
            return (f"the model's reply{where} did not fit its output limit even for a part too small to split further. "
                    "Raise extraction.extractor_max_tokens.")
        return f"{stage} failed{where}: {exc.message}"
    if isinstance(exc, MemoryCoreError):
        return f"{stage} failed{where}: {exc.message} ({exc.code})."
    if retryable(exc):
        return f"the store was busy or unreachable during {stage}{where} ({type(exc).__name__}: {str(exc)[:200]})."
    return (f"an internal error in {stage}{where} ({type(exc).__name__}: {str(exc)[:300]}). Another attempt would fail "
            "the same way; the server log has the traceback. Use Retry once the cause is fixed.")
