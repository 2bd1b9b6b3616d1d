"""Issue 11 with the real packaged MiniLM: a changed value is never folded into the old record, a
true paraphrase always reinforces it, through memory_write and through session extraction.

The cosine >= 0.93 shortcut only misbehaved with the real model (555-0143 vs 555-0199 is 0.99), so
these tests must not use the hashing embedder. Every pair is written for its own user, so the
pairs share one store per path without touching each other.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from benchmarks.extraction_eval import build_embedder
from memory_core import FixedClock, MemoryService, load_settings
from tests.claim_table import PARAPHRASES, UPDATES, Pair

pytestmark = pytest.mark.model
START = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def embedder():
    return build_embedder("packaged", load_settings())


def _service(tmp_path_factory, embedder, name: str) -> MemoryService:
    path = tmp_path_factory.mktemp(name) / "memory.sqlite"
    return MemoryService.open(path, load_settings(), clock=FixedClock(START), embedder=embedder)


@pytest.fixture(scope="module")
def tool_store(tmp_path_factory, embedder):
    service = _service(tmp_path_factory, embedder, "tool")
    yield service
    service.close()


@pytest.fixture(scope="module")
def extraction_store(tmp_path_factory, embedder):
    service = _service(tmp_path_factory, embedder, "extraction")
    yield service
    service.close()


def _user(kind: str, index: int) -> str:
    return f"{kind}{index}"


def _tool_write(service: MemoryService, user: str, said: str, content: str, attribute: str) -> dict:
    session = service.start_session(agent_id="assistant", user_id=user)
    session.record_turn("user", said)
    result = session.call_tool("memory_write", {
        "type": "semantic", "content": content, "attribute": attribute, "source_kind": "user_statement", "evidence": said,
    })
    assert result["ok"], result
    return result


def run_tool_pair(service: MemoryService, pair: Pair, user: str) -> tuple[dict, dict]:
    service.grant("assistant", f"user:{user}", read=True, write=True, actor="test")
    first = _tool_write(service, user, pair.said1, pair.content1, pair.attribute)
    service.clock.advance(days=1)
    second = _tool_write(service, user, pair.said2, pair.content2, pair.attribute)
    return first, second


def _extract(service: MemoryService, user: str, said: str, at: datetime) -> dict:
    detail = service.extract_transcript(agent_id="assistant", user_id=user, turns=[
        {"role": "user", "content": said, "at": at.isoformat()},
        {"role": "assistant", "content": "Noted.", "at": (at + timedelta(minutes=1)).isoformat()},
    ])
    assert detail.status == "succeeded", detail.to_dict()
    written = [c for c in detail.candidates if c["outcome"] in ("created", "reinforced") and c["candidate"]["kind"] != "summary"]
    assert len(written) == 1, [(c["outcome"], c.get("review"), c.get("detail")) for c in detail.candidates]
    return written[0]


def run_extraction_pair(service: MemoryService, pair: Pair, user: str) -> tuple[dict, dict]:
    service.grant("assistant", f"user:{user}", read=True, write=True, actor="test")
    first = _extract(service, user, pair.said1, START)
    second = _extract(service, user, pair.said2, START + timedelta(days=1))
    return first, second


def _is_update_handled(service: MemoryService, first_id: str, second: dict) -> bool:
    """The new value is its own live record, and the old one is superseded or in recorded conflict."""
    if second["outcome"] != "created" or second["record_id"] == first_id:
        return False
    old = service.record(first_id)
    new = service.record(second["record_id"])
    superseded = old.status == "superseded" and old.superseded_by_id == new.id and new.supersedes_id == first_id
    conflict = first_id in new.conflicts_with and new.id in old.conflicts_with and new.review_flagged_at is not None
    return superseded or conflict


@pytest.mark.parametrize("index,pair", list(enumerate(UPDATES)), ids=[p.id for p in UPDATES])
def test_value_update_through_memory_write_supersedes_or_conflicts(tool_store, index, pair):
    first, second = run_tool_pair(tool_store, pair, _user("u", index))
    assert _is_update_handled(tool_store, first["record_id"], second), (first, second)
    assert second["summary"].startswith("created ") and ("superseded" in second["summary"] or "conflict" in second["summary"])


@pytest.mark.parametrize("index,pair", list(enumerate(PARAPHRASES)), ids=[p.id for p in PARAPHRASES])
def test_paraphrase_through_memory_write_reinforces(tool_store, index, pair):
    first, second = run_tool_pair(tool_store, pair, _user("p", index))
    assert second["outcome"] == "reinforced" and second["record_id"] == first["record_id"], (first, second)
    assert second["summary"] == f"reinforced {first['record_id']}"


@pytest.mark.parametrize("index,pair", list(enumerate(UPDATES)), ids=[p.id for p in UPDATES])
def test_value_update_through_extraction_supersedes_or_conflicts(extraction_store, index, pair):
    first, second = run_extraction_pair(extraction_store, pair, _user("eu", index))
    second = {**second, "outcome": second["outcome"], "record_id": second["record_id"]}
    assert _is_update_handled(extraction_store, first["record_id"], second), (first, second)


@pytest.mark.parametrize("index,pair", list(enumerate(PARAPHRASES)), ids=[p.id for p in PARAPHRASES])
def test_paraphrase_through_extraction_reinforces(extraction_store, index, pair):
    first, second = run_extraction_pair(extraction_store, pair, _user("ep", index))
    assert second["outcome"] == "reinforced" and second["record_id"] == first["record_id"], (first, second)


def test_the_table_is_big_enough():
    assert len(UPDATES) >= 30 and len(PARAPHRASES) >= 30
    kinds = {p.kind for p in UPDATES}
    assert {"number", "date", "time", "amount", "identifier", "name", "negation"} <= kinds
