"""A model behind any server that speaks OpenAI's chat-completions protocol (Ollama, vLLM,
llama.cpp's server, LM Studio), through the ``openai`` SDK (the ``openai`` extra).

:class:`OpenAICompatibleLLM` answers :meth:`ask` like the Anthropic client does: one validated
pydantic object, or ExternalServiceError. Weaker models get three kinds of help:

- the request asks for a JSON-schema response format (the server constrains decoding to the
  schema); with ``structured_output = auto`` a server that refuses it (400 or 422) is asked again
  with a plain JSON-object format and then with the schema in the prompt only, and the step it
  answered is kept for later calls (a 400 about something else changes nothing);
- the answer is parsed leniently (prose, code fences and ``<think>`` blocks around the object are
  skipped) and validated against the schema;
- an answer that is still invalid, or cut off at the token limit, gets exactly one repair request
  that says what was wrong. If that answer is invalid too, :meth:`ask` raises with kind
  ``invalid_output``: the reviewer's caller fails the attempt closed, as for any model failure.

The API key comes from the environment variable the settings name, is handed to the SDK only,
and is cut out of every error message; nothing else in the environment (``OPENAI_API_KEY``,
``OPENAI_ORG_ID``, ...) is sent to the server.
"""

from __future__ import annotations

import os
import threading
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import ExternalServiceError, InvalidInputError
from ..extras import require_extra
from ..settings import OpenAICompatibleSettings
from ..store.urls import redact_url
from .structured import InvalidReply, parse_reply, schema_instruction, sendable

T = TypeVar("T", bound=BaseModel)

PROVIDER = "openai_compatible"
FORMAT_STEPS = ("json_schema", "json_object", "prompt")  # what auto steps down through
REFUSED_FORMAT_STATUSES = (400, 422)  # a server that does not know a response_format says one of these
_NO_KEY = "no-key-configured"  # the SDK insists on a key; the Authorization header is then omitted


def api_key_from_env(settings: OpenAICompatibleSettings) -> str | None:
    """The key in the variable ``api_key_env`` names (None when unset or empty)."""
    if not settings.api_key_env:
        return None
    return os.environ.get(settings.api_key_env) or None


class OpenAICompatibleLLM:
    """One model on an OpenAI-compatible server, answering prompts with validated objects."""

    provider = PROVIDER

    def __init__(self, settings: OpenAICompatibleSettings, *, model: str, api_key: str | None = None,
                 http_client: Any = None) -> None:
        self.model = model
        self.base_url = settings.base_url or ""
        require_extra("openai", "the openai_compatible model provider")
        import openai

        if not settings.base_url:
            raise InvalidInputError("openai_compatible.base_url is not set", field="openai_compatible.base_url")
        self._openai = openai
        self.temperature = settings.temperature
        self.timeout_s = settings.timeout_s
        self._secret = api_key
        # Explicit values for everything the SDK would otherwise read from the environment.
        headers: dict[str, Any] = {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}
        # Without a key no Authorization header at all (the SDK accepts that only per request).
        self._request_headers: dict[str, Any] = {"Authorization": openai.Omit()} if api_key is None else {}
        kwargs: dict[str, Any] = {
            "api_key": api_key or _NO_KEY, "base_url": settings.base_url, "timeout": settings.timeout_s,
            "max_retries": settings.max_retries, "default_headers": headers,
        }
        if http_client is not None:
            kwargs["http_client"] = http_client
        self._client = openai.OpenAI(**kwargs)
        self._auto = settings.structured_output == "auto"
        self._format = "json_schema" if self._auto else settings.structured_output
        self._format_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={redact_url(self.base_url)!r})"

    @property
    def response_format(self) -> str:
        """The structured-output step in use now (json_schema, json_object or prompt)."""
        return self._format

    def ask(self, *, system: str, prompt: str, schema: type[T], max_tokens: int = 1024, timeout: float | None = None) -> T:
        """One validated object; at most one repair request; raises ExternalServiceError otherwise."""
        prompt = sendable(prompt)
        messages = [{"role": "system", "content": sendable(schema_instruction(system, schema))},
                    {"role": "user", "content": prompt}]
        text, finish = self._complete(messages, schema, max_tokens, timeout)
        try:
            return parse_reply(text, schema)
        except InvalidReply as exc:
            first = exc.reason
        if finish == "length":
            # Sending a cut-off answer back only spends more of the limit: ask afresh, for less.
            repair = [messages[0], {"role": "user", "content": (
                f"{prompt}\n\nNOTE: an earlier answer to this was cut off at the output limit of {max_tokens} tokens. "
                "Answer with a shorter JSON object (fewer or shorter items).")}]
        else:
            repair = [*messages, {"role": "assistant", "content": sendable(text or "")}, {"role": "user", "content": (
                f"That answer could not be used: {first}. Reply again with one JSON object only, no prose and no code "
                "fence, that matches the JSON schema in the instructions.")}]
        text, finish = self._complete(repair, schema, max_tokens, timeout)
        try:
            return parse_reply(text, schema)
        except InvalidReply as exc:
            cut = " (cut off at the output limit)" if finish == "length" else ""
            raise ExternalServiceError(
                f"the model's answer stayed unusable after one repair request: {exc.reason}{cut}",
                kind="invalid_output", provider=PROVIDER, model=self.model, first_problem=first,
            ) from exc  # the chain keeps the schema's own complaint for the run's error (extract/failures.py)

    # -- one request ----------------------------------------------------------------------------

    def _complete(self, messages: list[dict], schema: type[BaseModel], max_tokens: int,
                  timeout: float | None) -> tuple[str | None, str | None]:
        """(text, finish_reason) of one completion, stepping down the response format on refusal.

        A lower step is kept for later calls only once the server has answered it: a 400 that has
        nothing to do with the format (a prompt past the context length) fails at every step and
        changes nothing."""
        step = self._format
        while True:
            try:
                completion = self._client.chat.completions.create(
                    model=self.model, messages=messages, max_tokens=max_tokens, temperature=self.temperature,
                    **_format_argument(step, schema), timeout=timeout if timeout is not None else self.timeout_s,
                    extra_headers=self._request_headers,
                )
            except self._openai.APIStatusError as exc:
                if self._auto and exc.status_code in REFUSED_FORMAT_STATUSES and step != FORMAT_STEPS[-1]:
                    step = FORMAT_STEPS[FORMAT_STEPS.index(step) + 1]
                    continue
                raise self._error(f"the server answered HTTP {exc.status_code}: {exc.message}", "api_error",
                                  status=exc.status_code) from None
            except self._openai.APITimeoutError:
                raise self._error("the request timed out", "timeout") from None
            except self._openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise self._error(f"the server could not be reached or broke off: {type(cause).__name__}: {cause}",
                                  "connection") from None
            except (self._openai.APIError, ValueError) as exc:  # an answer that is not a chat completion
                raise self._error(f"the server's answer was not a chat completion: {type(exc).__name__}: {exc}",
                                  "invalid_response") from None
            self._keep(step)
            return _text_of(completion, self._error)

    def _keep(self, answered: str) -> None:
        with self._format_lock:  # only ever down: a call still on a higher step must not undo it
            if FORMAT_STEPS.index(answered) > FORMAT_STEPS.index(self._format):
                self._format = answered

    def _error(self, message: str, kind: str, **details: Any) -> ExternalServiceError:
        if self._secret:
            message = message.replace(self._secret, "[redacted]")
        return ExternalServiceError(f"{PROVIDER} model {self.model}: {message}", kind=kind, provider=PROVIDER,
                                    model=self.model, **details)


def _format_argument(step: str, schema: type[BaseModel]) -> dict[str, Any]:
    if step == "json_schema":
        name = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in schema.__name__)[:64] or "answer"
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": schema.model_json_schema(), "strict": False}}}
    if step == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def _text_of(completion: Any, error) -> tuple[str | None, str | None]:
    choices = getattr(completion, "choices", None)
    if not choices:
        raise error("the server's answer was not a chat completion (no choices)", "invalid_response")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None)
    return (text if isinstance(text, str) else None), getattr(choice, "finish_reason", None)
