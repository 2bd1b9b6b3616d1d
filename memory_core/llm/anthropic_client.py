"""A thin wrapper over Anthropic's SDK that asks for one JSON object and validates it.

Core logic never imports the SDK directly; it receives a :class:`StructuredLLM` built from
settings (or None when no key is configured). Tests pass an ``http_client`` whose transport
answers like the API does, so no test touches the network.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import ExternalServiceError
from ..settings import AnthropicSettings
from .structured import InvalidReply, parse_reply, schema_instruction, sendable

T = TypeVar("T", bound=BaseModel)


class StructuredLLM:
    """Sends a system + user prompt and parses the reply into a pydantic model."""

    provider = "anthropic"

    def __init__(self, settings: AnthropicSettings, *, http_client: Any = None) -> None:
        import anthropic

        if settings.api_key is None:
            raise ExternalServiceError("no Anthropic API key is configured")
        kwargs: dict[str, Any] = {
            "api_key": settings.api_key.get_secret_value(),
            "timeout": settings.timeout_s,
            "max_retries": settings.max_retries,
        }
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        if http_client is not None:
            kwargs["http_client"] = http_client
        self._client = anthropic.Anthropic(**kwargs)
        self._anthropic = anthropic
        self.model = settings.model

    def ask(self, *, system: str, prompt: str, schema: type[T], max_tokens: int = 1024, timeout: float | None = None) -> T:
        """One request; returns the validated object or raises ExternalServiceError."""
        instruction = sendable(schema_instruction(system, schema))
        prompt = sendable(prompt)
        try:
            message = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=instruction,
                messages=[{"role": "user", "content": prompt}],
                **({"timeout": timeout} if timeout is not None else {}),
            )
        except self._anthropic.APITimeoutError as exc:
            raise ExternalServiceError("the Anthropic request timed out", kind="timeout") from exc
        except self._anthropic.APIError as exc:
            raise ExternalServiceError(f"the Anthropic request failed: {exc}", kind="api_error") from exc
        if getattr(message, "stop_reason", None) == "max_tokens":  # the JSON is cut off: ask for less, not again
            raise ExternalServiceError(f"the model's reply was cut at the output limit ({max_tokens} tokens)",
                                       kind="output_too_large", max_tokens=max_tokens)
        text = "".join(getattr(block, "text", "") for block in message.content)
        return parse_json_reply(text, schema)


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Parse the first JSON object in ``text`` into ``schema`` or raise ExternalServiceError."""
    try:
        return parse_reply(text, schema)
    except InvalidReply as exc:
        raise ExternalServiceError(f"the model's answer was unusable: {exc.reason}", kind="invalid_output") from exc


def build_llm(settings: AnthropicSettings, *, http_client: Any = None) -> StructuredLLM | None:
    """A StructuredLLM when a key is configured, else None (callers use their offline path)."""
    if settings.api_key is None:
        return None
    return StructuredLLM(settings, http_client=http_client)
