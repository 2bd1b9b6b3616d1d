"""Small real doubles for extraction tests: scripted extractor/reviewer and a fake Messages API."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx2 as httpx  # the installed anthropic SDK (2.x) is built on httpx2, which mirrors httpx

from memory_core.clock import format_ts, parse_ts
from memory_core.extract.candidates import Candidate, ExtractionOutput, ReviewDecision, ReviewItem, SummaryProposal
from memory_core.llm.anthropic_client import StructuredLLM
from memory_core.settings import AnthropicSettings


def ended_session(service, turns: list[tuple[str, str]], *, agent_id: str = "assistant", user_id: str = "alice",
                  start: str | datetime | None = None, step_minutes: int = 1, project_id: str | None = None) -> tuple[str, str]:
    """Record ``turns`` (role, text) a minute apart from ``start`` (default: the clock), end the session.

    Returns (session_id, run_id).
    """
    session = service.start_session(agent_id=agent_id, user_id=user_id, project_id=project_id)
    at = parse_ts(start) if start is not None else service.clock.now()
    for role, text in turns:
        session.record_turn(role, text, at=at)
        at = at + timedelta(minutes=step_minutes)
    run_id = session.end()
    return session.id, run_id


class ScriptedExtractor:
    """Returns the candidates (and summary) it was built with."""

    name = "scripted"

    def __init__(self, candidates: list[dict], summary: dict | None = None) -> None:
        self.candidates = [Candidate(**c) for c in candidates]
        self.summary = SummaryProposal(**summary) if summary else None

    def extract(self, transcript):
        return ExtractionOutput(candidates=self.candidates, summary=self.summary), {"scripted": True}


class ScriptedReviewer:
    """Answers each review with ``decide(item)`` (default: accept), recording what it saw."""

    name = "scripted"

    def __init__(self, decide: Callable[[ReviewItem], dict] | None = None) -> None:
        self.decide = decide or (lambda item: {"verdict": "accept", "reason": "scripted accept"})
        self.seen: list[ReviewItem] = []

    def review(self, item: ReviewItem) -> ReviewDecision:
        self.seen.append(item)
        return ReviewDecision(**self.decide(item))


def message(text: str, stop_reason: str = "end_turn") -> dict:
    """A Messages API response body carrying ``text``."""
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


class CutOff(str):
    """A reply the model stopped at its output token limit (``stop_reason: max_tokens``)."""


class FakeMessagesAPI:
    """An httpx transport answering /v1/messages from a queue of replies.

    A reply is a dict (sent as JSON text), a str (sent as the text block), a :class:`CutOff` (a
    text cut at the token limit) or the string "timeout" (raises a read timeout). Requests are
    kept for assertions.
    """

    def __init__(self, replies: list) -> None:
        self.replies = list(replies)
        self.requests: list[dict] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        reply = self.replies.pop(0) if self.replies else "timeout"
        if reply == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return httpx.Response(200, json=message(text, "max_tokens" if isinstance(reply, CutOff) else "end_turn"))

    def llm(self) -> StructuredLLM:
        settings = AnthropicSettings(api_key="test-key", max_retries=0, timeout_s=5.0)
        return StructuredLLM(settings, http_client=httpx.Client(transport=httpx.MockTransport(self.handler)))


def records(service, **where) -> list[dict]:
    """Record rows as dicts, optionally filtered by column equality."""
    sql = "SELECT * FROM records"
    if where:
        sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
    return [dict(r) for r in service.store.query(sql + " ORDER BY seq", tuple(where.values()))]


def facts(service) -> list[dict]:
    """Records other than session summaries."""
    return [r for r in records(service) if r["source_kind"] != "session_summary"]


def ts(value: str) -> str:
    return format_ts(parse_ts(value))
