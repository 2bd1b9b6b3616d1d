"""Framework neutrality as a test: the same conversation through Deep Agents and through CrewAI
leaves the same semantic records (content, subject, status, source), with no change to the core.

Each framework runs on its own fresh store with the same clock and embedder; the explicit writes
happen through each framework's tool calling, and the rest comes from session-end extraction of the
transcript each adapter recorded.
"""

from __future__ import annotations

import pytest

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder

from .conversation import play
from .harness import INSTALLED, make_harness

pytestmark = pytest.mark.skipif(
    not all(INSTALLED.values()),
    reason="needs both deepagents and crewai in one environment; `make test` runs it in .venv-crewai",
)

# The subject is "<entity id>:<attribute>"; entity ids are random per store, so the subject is
# compared as "<entity kind>/<canonical name>:<attribute>".
SEMANTIC = (
    "SELECT r.content, COALESCE(e.kind || '/' || e.canonical_name, '-') || ':' || COALESCE(r.attribute, '') AS subject, "
    "r.status, r.source_kind, r.source_ref FROM records r LEFT JOIN entities e ON e.id = r.subject_entity_id "
    "WHERE r.type = 'semantic' ORDER BY r.content, r.status, subject"
)


def run_through(framework, tmp_path):
    service = MemoryService.open(tmp_path / f"{framework}.sqlite", load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"),
                                 embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    harness = make_harness(framework, service, trigger_mode="hybrid")
    run_id = play(harness)
    detail = service.run_extraction(run_id)
    assert detail is not None and detail.status == "succeeded"
    records = [tuple(row) for row in service.store.query(SEMANTIC)]
    transcript = [(t["role"], t["content"]) for t in service.transcript("ses-1")]
    service.close()
    return records, transcript


def test_same_conversation_same_semantic_records(tmp_path):
    deep_records, deep_transcript = run_through("deepagents", tmp_path)
    crew_records, crew_transcript = run_through("crewai", tmp_path)
    assert deep_transcript == crew_transcript
    assert deep_records == crew_records
    by_content = {r[0]: r for r in deep_records}
    # both write paths and the lifecycle are represented, so the comparison is not vacuous
    assert by_content["The user prefers concise answers."][2] == "superseded"
    assert by_content["The user prefers detailed answers with examples."][2:4] == ("confirmed", "user_statement")
    assert by_content["Order 4411 was shipped by courier Rapidex."][3] == "tool_result"
    assert any(r[2] == "deleted" for r in deep_records), "the forgotten record stays as a tombstone"
    assert not any("Miso" in r[0] for r in deep_records)
    extracted = [r for r in deep_records if r[3] == "user_statement" and r[4] == "ses-1" and "timezone" in r[0].lower() + (r[1] or "")]
    assert extracted, "session-end extraction added the statement the model did not save"
