"""Every refusal is logged, also when the refused text cannot be stored (issue 24, item 9).

A lone surrogate is refused as ``invalid_input`` before anything is written, but the row that
records the refusal used to hold the same text and failed to encode (on both backends), so the
refusal left no trace. Each logger of outside text now stores an escaped form: the write log, the
event log, the extraction run's error, the search log's failure row. Runs on both backends.
"""

from __future__ import annotations

import json

import pytest

from memory_core import MemoryService
from memory_core.errors import ExternalServiceError, InvalidInputError
from memory_core.extract.runner import ExtractionRunner
from memory_core.store.db import loads
from tests.fakes import HashingEmbedder
from tests.unit.extract.helpers import ended_session

LONE = json.loads('"The user likes \\ud800 tea."')  # a str holding a lone surrogate, as json.loads makes it
ESCAPED = "\\ud800"  # what the log keeps: the six visible characters


def _counts(svc) -> tuple[int, ...]:
    q = svc.store.scalar
    return (q("SELECT COUNT(*) FROM records"), q("SELECT COUNT(*) FROM write_log WHERE outcome != 'refused'"),
            q("SELECT COUNT(*) FROM turns"), q("SELECT COUNT(*) FROM entities"))


def _holds_escape(value) -> bool:
    """Whether some string (or key) inside ``value`` carries an escaped surrogate, ``\\udXXX``."""
    return "\\ud" in json.dumps(value, ensure_ascii=False).replace("\\\\", "\\")


def _refusals(svc) -> list[dict]:
    rows = svc.store.query("SELECT operation, outcome, record_id, candidate, validation FROM write_log "
                           "WHERE outcome = 'refused' ORDER BY seq")
    return [{**dict(r), "candidate": loads(r["candidate"]), "validation": loads(r["validation"])} for r in rows]


@pytest.fixture
def alice(any_service):
    any_service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    return any_service.start_session(agent_id="assistant", user_id="alice")


TOOL_CALLS = [
    ("memory_write", {"type": "semantic", "content": LONE, "attribute": "tea"}, "content"),
    ("memory_write", '{"type": "semantic", "content": "The user likes \\ud800 tea."}', "content"),  # JSON text
    ("memory_write", {"type": "semantic", "content": "The user likes tea.", "tags": ["ok", LONE]}, "tags"),
    ("memory_write", {"type": "semantic", "content": "The user likes tea.", LONE: "key"}, "arguments"),
    ("memory_revise", {"action": "update", "record_id": "mem_0000000000000000", "content": LONE, "reason": "fix"}, "content"),
    ("memory_forget", {"record_id": "mem_\udc00", "reason": "asked"}, "record_id"),
]


@pytest.mark.parametrize("name,arguments,field", TOOL_CALLS, ids=[f"{n}-{f}-{i}" for i, (n, _, f) in enumerate(TOOL_CALLS)])
def test_a_refused_tool_write_holding_a_lone_surrogate_leaves_its_write_log_row(any_service, alice, name, arguments, field):
    before = _counts(any_service)
    result = alice.call_tool(name, arguments)
    assert result["ok"] is False and result["error"]["code"] == "invalid_input", result
    assert "lone surrogate" in result["error"]["message"]
    rows = _refusals(any_service)
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["operation"] == name
    refused = row["validation"]["refused"]
    assert refused["code"] == "invalid_input" and refused["stage"] == "tool_call"
    assert _holds_escape(row["candidate"]), row["candidate"]
    assert _counts(any_service) == before  # nothing but the refusal's row


def test_a_refused_host_write_holding_a_lone_surrogate_is_logged_by_the_write_path(any_service):
    before = _counts(any_service)
    with pytest.raises(InvalidInputError):
        any_service.write_system_fact(scope="user:alice", content=LONE, attribute="drink", actor="host:crm")
    [row] = _refusals(any_service)
    assert row["operation"] == "system_fact"
    assert row["validation"]["refused"]["stage"] == "input_validation"
    assert ESCAPED in row["candidate"]["content"]
    assert _counts(any_service) == before


def test_a_refused_write_nested_too_deeply_is_logged_cut(any_service, alice):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    result = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "tags": deep})
    assert result["error"]["code"] == "invalid_input"
    [row] = _refusals(any_service)
    assert row["candidate"]["content"] == "The user likes tea."
    assert "nested deeper than" in json.dumps(row["candidate"])


class _FailingExtractor:
    """An extractor whose error quotes text that cannot be stored (as a model client's might)."""

    name = "failing"

    def extract(self, transcript):
        raise ExternalServiceError(f"the model returned {LONE!s}", kind="api_error")


def test_an_extraction_error_quoting_a_lone_surrogate_is_recorded_and_the_run_stays_retryable(any_service, alice):
    any_service.extraction = ExtractionRunner(any_service.extraction_deps(), extractor=_FailingExtractor())
    _, run_id = ended_session(any_service, [("user", "I like green tea."), ("assistant", "Noted.")])
    detail = any_service.run_extraction(run_id)
    assert detail.status == "queued", detail.run  # retried later, not stuck in 'running'
    assert ESCAPED in detail.run["error"] and detail.run["error"].startswith("the model API failed")
    attempt = any_service.store.query_one("SELECT outcome, error FROM extraction_attempts WHERE run_id = ?", (run_id,))
    assert attempt["outcome"] == "failed" and ESCAPED in attempt["error"]
    reason = any_service.store.scalar("SELECT reason FROM events WHERE kind = 'extraction.attempt_failed'")
    assert reason is not None and ESCAPED in reason


class _BrokenEmbedder(HashingEmbedder):
    """Embeds records, fails on a query with an error quoting unstorable text."""

    def embed(self, texts):
        if any(t.startswith("where") for t in texts):
            raise RuntimeError(f"cannot embed {LONE!s}")
        return super().embed(texts)


def test_a_failed_search_whose_error_quotes_a_lone_surrogate_still_gets_its_log_row(target, clock, settings):
    svc = MemoryService.open(target, settings, clock=clock, embedder=_BrokenEmbedder())
    try:
        with pytest.raises(RuntimeError, match="cannot embed"):  # the search's own error, not an encoding error
            svc.search(agent_id="assistant", user_id="alice", query="where does the user live")
        row = svc.store.query_one("SELECT raw_query, empty_reason FROM search_log")
        assert row is not None and row["raw_query"] == "where does the user live"
        assert ESCAPED in row["empty_reason"]
    finally:
        svc.close()


def test_lifecycle_reasons_holding_a_lone_surrogate_are_invalid_input(any_service, alice):
    rid = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes green tea.", "attribute": "tea"})["record_id"]
    events = any_service.store.scalar("SELECT COUNT(*) FROM events")
    with pytest.raises(InvalidInputError):
        any_service.confirm(rid, actor="ui:rita", reason=LONE, promote=True)
    with pytest.raises(InvalidInputError):
        any_service.forget(rid, actor="ui:rita", reason=LONE)
    assert any_service.store.scalar("SELECT COUNT(*) FROM events") == events
    assert any_service.record(rid).status == "provisional"


def test_the_model_view_a_host_records_is_kept_even_with_a_lone_surrogate(any_service, alice):
    any_service.open_session_context(alice, policy="Use memory_search when the past matters.", memory_tools=[], ambient=False)
    assert any_service.record_model_view(alice.id, system_text=f"You are helpful. {LONE}",
                                         offered_tools=[{"name": "memory_search", "description": LONE}]) is True
    recorded = any_service.session_context(alice.id)
    assert ESCAPED in recorded["system_text"] and ESCAPED in json.dumps(recorded["offered_tools"])
