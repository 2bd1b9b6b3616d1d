"""Reading one JSON object out of a model's answer, for every provider.

Weaker and local models wrap their JSON in prose, code fences or a ``<think>`` block, or emit a
first brace that is not the object at all. :func:`parse_reply` looks at each ``{`` in turn, decodes
the JSON object that starts there and returns the first top-level one that validates against the
schema; it raises :class:`InvalidReply` (with a short reason a model can act on) when none does.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MAX_STARTS = 64  # braces tried before giving up (each try decodes from there once)


class InvalidReply(ValueError):
    """The model's answer held no JSON object matching the schema; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sendable(text: str) -> str:
    """``text`` with lone surrogates (which no UTF-8 request body can carry) replaced by U+FFFD;
    a surrogate pair split across two code points becomes the character it encodes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _storable(value):
    """Decoded JSON with every string made sendable: a ``\\ud800`` escape in a model's answer
    must not become a lone surrogate that SQLite (UTF-8) cannot store."""
    if isinstance(value, str):
        return sendable(value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {sendable(k): _storable(v) for k, v in value.items()}
    return value


def schema_instruction(system: str, schema: type[BaseModel]) -> str:
    """The system prompt followed by the instruction to answer with one object of ``schema``."""
    return (
        f"{system}\n\nAnswer with one JSON object only, no prose, matching this JSON schema:\n"
        f"{json.dumps(schema.model_json_schema())}"
    )


def _errors_text(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "(root)"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = len(exc.errors()) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_reply(text: str | None, schema: type[T]) -> T:
    """The first JSON object in ``text`` that validates as ``schema``; raises InvalidReply."""
    if not text or not text.strip():
        raise InvalidReply("the answer was empty")
    body = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    first_error: ValidationError | None = None
    starts = 0
    position = body.find("{")
    while position != -1 and starts < _MAX_STARTS:
        starts += 1
        try:
            value, end = decoder.raw_decode(body, position)
        except ValueError:
            position = body.find("{", position + 1)
            continue
        try:  # a "{" always decodes to a dict; objects nested in it are not tried on their own
            return schema.model_validate(_storable(value))
        except ValidationError as exc:
            first_error = first_error or exc
        position = body.find("{", end)
    if first_error is not None:
        raise InvalidReply(f"the JSON object did not match the schema ({_errors_text(first_error)})") from first_error
    if "{" in body:
        raise InvalidReply("the answer held no complete JSON object (malformed or cut off)")
    raise InvalidReply("the answer held no JSON object")
