"""Hosted model access (Anthropic), shared by the entailment judge, extraction, review and rewrite.

Components depend on :class:`LanguageModel` (anything that answers a prompt with a validated
pydantic object), never on the SDK; :func:`~memory_core.llm.anthropic_client.build_llm` builds the
hosted one from settings and tests pass small fakes.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


class LanguageModel(Protocol):
    """A model client that replies to a prompt with an instance of ``schema``."""

    def ask(self, *, system: str, prompt: str, schema: type[T], max_tokens: int = 1024, timeout: float | None = None) -> T:
        """One structured request; raises ExternalServiceError when the model cannot answer."""
        ...
