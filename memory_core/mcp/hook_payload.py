"""Host hook payloads and transcripts, read and checked (Claude Code's shapes; no store access here).

A command hook receives one JSON object on stdin. The fields read: ``session_id`` (the host's id
for the conversation), ``hook_event_name``, ``transcript_path`` (the conversation as JSON lines),
``prompt`` (UserPromptSubmit), ``source`` (SessionStart) and ``reason`` (SessionEnd). Anything
else in the payload is ignored. A payload that is not an object, lacks a usable ``session_id``,
names another event than the one the hook was configured for, or carries text that cannot be
stored is refused with :class:`InvalidInputError` before anything is written.

The transcript is the one source of turns: each line that is a user or assistant message becomes
a turn with its text blocks (tool calls, tool results, thinking blocks, sidechain (subagent) and
meta lines are left out), in file order, with the line's timestamp. Only complete lines (ending
in a newline) are read, so a line the host is still writing is taken next time; a line that is
not JSON is skipped and reported. Consecutive assistant lines of one message (the host writes one
line per content block) become one turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import format_ts
from ..errors import InvalidInputError
from ..inputs import check_text, check_texts, parse_input_ts
from ..policy.scopes import validate_id

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
MAX_TURN_CHARS = 200_000  # the same bound Session.record_turn enforces; longer text is cut, with a marker
CUT_MARKER = "\n[... cut: the turn was longer than 200000 characters]"
MAX_PAYLOAD_BYTES = 4 * 1_048_576
MAX_TRANSCRIPT_BYTES = 256 * 1_048_576


@dataclass(frozen=True)
class HookEvent:
    """One hook call, checked."""

    event: str
    host_session_id: str
    transcript_path: str | None = None
    prompt: str | None = None
    source: str | None = None
    reason: str | None = None

    @property
    def label(self) -> str:
        """``SessionStart:resume``-style name kept as the host session's last event."""
        detail = self.source if self.event == "SessionStart" else self.reason if self.event == "SessionEnd" else None
        return f"{self.event}:{detail}" if detail else self.event


@dataclass(frozen=True)
class TranscriptTurn:
    """A turn read from the host's transcript: its line number (0-based), role, text and time."""

    line: int
    role: str
    content: str
    at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "role": self.role, "content": self.content, "at": self.at}


@dataclass
class TranscriptRead:
    turns: list[TranscriptTurn] = field(default_factory=list)
    lines: int = 0  # complete lines in the file
    skipped: list[dict[str, Any]] = field(default_factory=list)


def parse_event(event: object, payload: object) -> HookEvent:
    """A checked :class:`HookEvent` from the configured event name and the payload, or InvalidInputError."""
    if event not in EVENTS:
        raise InvalidInputError(f"unknown hook event {str(event)[:60]!r}; expected one of {', '.join(EVENTS)}", field="event")
    if not isinstance(payload, dict):
        raise InvalidInputError("the hook payload must be a JSON object", field="payload")
    named = payload.get("hook_event_name")
    if named is not None and named != event:
        raise InvalidInputError(f"the payload is a {str(named)[:60]!r} event but this hook was configured for {event}",
                                field="hook_event_name")
    session_id = payload.get("session_id")
    if session_id is None:
        raise InvalidInputError("the hook payload has no session_id", field="session_id")
    validate_id(session_id, "session_id")
    values: dict[str, str | None] = {}
    for name in ("transcript_path", "prompt", "source", "reason"):
        value = payload.get(name)
        if value is not None and not isinstance(value, str):
            raise InvalidInputError(f"{name} must be a string", field=name)
        values[name] = value
    check_texts({k: v for k, v in values.items() if v is not None})
    for name in ("source", "reason"):
        if values[name] is not None and len(values[name]) > 64:
            raise InvalidInputError(f"{name} is longer than 64 characters", field=name)
    path = values["transcript_path"]
    if path is not None and ("\x00" in path or len(path) > 4096):
        raise InvalidInputError("transcript_path is not a usable file path", field="transcript_path")
    return HookEvent(event, session_id, path or None, values["prompt"], values["source"], values["reason"])


def parse_payload_text(event: object, text: str | bytes) -> HookEvent:
    """:func:`parse_event` over the raw stdin text (JSON), refusing what is not JSON."""
    if isinstance(text, bytes):
        if len(text) > MAX_PAYLOAD_BYTES:
            raise InvalidInputError(f"the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes", field="payload")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError("the hook payload is not UTF-8 text", field="payload") from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"the hook payload is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                                field="payload") from None
    except RecursionError:
        raise InvalidInputError("the hook payload is nested too deeply", field="payload") from None
    return parse_event(event, payload)


def read_transcript(path: str | Path) -> TranscriptRead:
    """Every user and assistant turn of a host transcript file (see the module docstring)."""
    file = Path(path)
    if not file.is_file():
        raise InvalidInputError(f"the transcript {str(path)[:200]!r} is not a readable file", field="transcript_path")
    if file.stat().st_size > MAX_TRANSCRIPT_BYTES:
        raise InvalidInputError(f"the transcript is larger than {MAX_TRANSCRIPT_BYTES} bytes", field="transcript_path")
    data = file.read_bytes()
    complete = data[: data.rfind(b"\n") + 1] if b"\n" in data else b""
    return parse_transcript_lines(complete.split(b"\n")[:-1] if complete else [])


def parse_transcript_lines(lines: list[bytes]) -> TranscriptRead:
    """Turns from the complete lines of a transcript (bytes each, without the newline)."""
    out = TranscriptRead(lines=len(lines))
    last_message_id: str | None = None  # the host message the last (assistant) turn came from
    for number, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            out.skipped.append({"line": number, "why": "not a JSON line"})
            continue
        turn, message_id, why = _turn(number, item)
        if turn is None:
            if why:
                out.skipped.append({"line": number, "why": why})
            continue
        previous = out.turns[-1] if out.turns else None
        if previous is not None and previous.role == turn.role == "assistant" and message_id and message_id == last_message_id:
            out.turns[-1] = TranscriptTurn(previous.line, "assistant", _cut(previous.content + "\n" + turn.content), previous.at)
        else:
            out.turns.append(turn)
        last_message_id = message_id if turn.role == "assistant" else None
    return out


def _turn(number: int, item: Any) -> tuple[TranscriptTurn | None, str | None, str | None]:
    """(turn, assistant message id, why skipped) for one parsed line; (None, None, None) when the
    line is simply not conversation (summaries, snapshots, tool traffic)."""
    if not isinstance(item, dict) or item.get("type") not in ("user", "assistant"):
        return None, None, None
    if item.get("isSidechain") is True or item.get("isMeta") is True:
        return None, None, None
    message = item.get("message")
    if not isinstance(message, dict):
        return None, None, "a user or assistant line without a message object"
    role = message.get("role") or item["type"]
    if role not in ("user", "assistant"):
        return None, None, None
    text = _text_of(message.get("content"))
    if not text or not text.strip():
        return None, None, None
    try:
        check_text(text, "content")
    except InvalidInputError:
        return None, None, "text that cannot be stored (a lone surrogate)"
    if "\x00" in text:  # SQLite would keep it, PostgreSQL cannot: skip it on both, so both stores agree
        return None, None, "text with a NUL character"
    at = item.get("timestamp")
    try:
        at = format_ts(parse_input_ts(at, "timestamp")) if isinstance(at, str) else None
    except InvalidInputError:
        at = None
    message_id = message.get("id") if isinstance(message.get("id"), str) else None
    return TranscriptTurn(number, role, _cut(text), at), message_id, None


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [block["text"] for block in content
             if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]
    return "\n".join(parts) if parts else None


def _cut(text: str) -> str:
    if len(text) <= MAX_TURN_CHARS:
        return text
    return text[: MAX_TURN_CHARS - len(CUT_MARKER)] + CUT_MARKER


def turns_from_dicts(items: object) -> list[TranscriptTurn]:
    """Turns sent over HTTP by a remote hook (the same shape :meth:`TranscriptTurn.to_dict` gives), checked."""
    if not isinstance(items, list):
        raise InvalidInputError("turns must be a list", field="turns")
    out: list[TranscriptTurn] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) - {"line", "role", "content", "at"}:
            raise InvalidInputError(f"turns[{i}] must be an object with line, role, content and at", field="turns")
        line, role, content, at = item.get("line"), item.get("role"), item.get("content"), item.get("at")
        if not isinstance(line, int) or isinstance(line, bool) or line < 0 or (out and line <= out[-1].line):
            raise InvalidInputError(f"turns[{i}].line must be a line number after the previous turn's", field="turns")
        if role not in ("user", "assistant"):
            raise InvalidInputError(f"turns[{i}].role must be user or assistant", field="turns")
        if not isinstance(content, str) or not content.strip() or len(content) > MAX_TURN_CHARS:
            raise InvalidInputError(f"turns[{i}].content must be text of 1-{MAX_TURN_CHARS} characters", field="turns")
        check_text(content, f"turns[{i}].content")
        if at is not None:
            parse_input_ts(at, f"turns[{i}].at")
        out.append(TranscriptTurn(line, role, content, at))
    return out
