"""Model access for the roles that call a model: extraction, review, query rewriting, the
host-memory decider and the entailment judge.

Components depend on :class:`LanguageModel` (anything that answers a prompt with a validated
pydantic object), never on an SDK. :func:`~memory_core.llm.factory.build_role_models` picks each
role's client from settings: Anthropic's (:mod:`.anthropic_client`) or any OpenAI-compatible
server's (:mod:`.openai_client`); tests pass small fakes. A client has ``provider`` and ``model``
attributes, which name it in logs and fitness results.
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
