"""Which model client each role gets, chosen from settings (core logic never builds one).

Five roles call a model: the session extractor, its reviewer, query rewriting, the host-memory
decider and the entailment judge. Each role's own setting names its provider:

| role | setting | offline | anthropic | openai_compatible |
|---|---|---|---|---|
| extractor | ``extraction.extractor`` | ``offline`` | ``anthropic``, ``auto`` | ``openai_compatible`` |
| reviewer | ``extraction.reviewer`` | ``offline`` | ``anthropic``, ``auto`` | ``openai_compatible`` |
| rewrite | ``retrieval.rewrite_provider`` | (``rewrite_enabled`` off) | ``anthropic`` | ``openai_compatible`` |
| host_memory | ``host_memory.decider`` | ``offline`` | ``anthropic``, ``auto`` | ``openai_compatible`` |
| entailment | ``write.entailment_judge`` | ``offline`` | ``anthropic`` | ``openai_compatible`` |

An Anthropic role without an API key gets None and runs its offline path, as before. A role set
to ``openai_compatible`` without ``openai_compatible.base_url`` or a model is a configuration
error, raised when the service opens (InvalidInputError): the user asked for a server, so a
silent fallback would hide a typo. ``openai_compatible.role_models`` and ``role_base_urls`` give
some roles another model or another server; roles that name the same server and model share one client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInputError
from ..settings import MODEL_ROLES, Settings
from . import LanguageModel

ANTHROPIC = "anthropic"
OPENAI_COMPATIBLE = "openai_compatible"


@dataclass(frozen=True)
class RoleModels:
    """The model client of each role; None means that role runs its offline path."""

    extractor: LanguageModel | None = None
    reviewer: LanguageModel | None = None
    rewrite: LanguageModel | None = None
    host_memory: LanguageModel | None = None
    entailment: LanguageModel | None = None

    def describe(self) -> dict[str, str | None]:
        """role -> 'provider:model' (or None), for logs and the admin app; never a key."""
        return {role: model_label(getattr(self, role)) for role in MODEL_ROLES}


def model_label(llm: Any) -> str | None:
    """'anthropic:claude-haiku-4-5', 'openai_compatible:qwen2.5:7b', or None without a model."""
    if llm is None:
        return None
    return f"{getattr(llm, 'provider', ANTHROPIC)}:{getattr(llm, 'model', '?')}"


def role_providers(settings: Settings) -> dict[str, str | None]:
    """role -> the provider its setting asks for ('anthropic', 'openai_compatible') or None (offline)."""
    def hosted(choice: str) -> str | None:
        if choice == "offline":
            return None
        return OPENAI_COMPATIBLE if choice == OPENAI_COMPATIBLE else ANTHROPIC  # 'auto' means Anthropic

    return {
        "extractor": hosted(settings.extraction.extractor),
        "reviewer": hosted(settings.extraction.reviewer),
        "rewrite": settings.retrieval.rewrite_provider,  # built while rewriting is off too: it can be switched on later
        "host_memory": hosted(settings.host_memory.decider),
        "entailment": hosted(settings.write.entailment_judge),
    }


def check_openai_compatible(settings: Settings) -> None:
    """Raise InvalidInputError when a role asks for openai_compatible without a server or a model."""
    wanted = [role for role, provider in role_providers(settings).items() if provider == OPENAI_COMPATIBLE]
    if not wanted:
        return
    section = settings.openai_compatible
    serverless = [role for role in wanted if not (section.role_base_urls.get(role) or section.base_url)]
    if serverless:
        raise InvalidInputError(
            f"{', '.join(serverless)} use the openai_compatible provider, but openai_compatible.base_url is not set "
            "(e.g. MEMORY_OPENAI_COMPATIBLE__BASE_URL=http://localhost:11434/v1)", field="openai_compatible.base_url")
    unnamed = [role for role in wanted if not (section.role_models.get(role) or section.model)]
    if unnamed:
        raise InvalidInputError(
            f"{', '.join(unnamed)} use the openai_compatible provider, but no model is named "
            "(set openai_compatible.model, or openai_compatible.role_models for these roles)", field="openai_compatible.model")


def build_role_models(settings: Settings, *, anthropic: LanguageModel | None = None, http_client: Any = None) -> RoleModels:
    """The client of each role: ``anthropic`` (already built, or None without a key) for the
    Anthropic roles, a new :class:`~.openai_client.OpenAICompatibleLLM` per model for the others.

    ``http_client`` is passed to the OpenAI SDK (tests give one to inspect the traffic)."""
    check_openai_compatible(settings)
    section = settings.openai_compatible
    clients: dict[tuple[str, str], LanguageModel] = {}
    chosen: dict[str, LanguageModel | None] = {}
    for role, provider in role_providers(settings).items():
        if provider is None:
            chosen[role] = None
            continue
        if provider == ANTHROPIC:
            chosen[role] = anthropic
            continue
        model = section.role_models.get(role) or section.model  # both checked above
        base_url = section.role_base_urls.get(role) or section.base_url
        if (base_url, model) not in clients:
            from .openai_client import OpenAICompatibleLLM, api_key_from_env

            server = section.model_copy(update={"base_url": base_url})
            clients[(base_url, model)] = OpenAICompatibleLLM(server, model=model, api_key=api_key_from_env(section),
                                                            http_client=http_client)
        chosen[role] = clients[(base_url, model)]
    return RoleModels(**chosen)
