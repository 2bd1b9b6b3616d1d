"""The gate fixture (``tests/data/gate_calibration.json``) as labelled calibration samples.

The fixture holds records of one principal, distractor records of another user and queries, each
answerable (with the keys of its relevant records) or off-topic. Loading writes the records through
``memory_write`` into a scratch store (and inserts generated distractors in another user's scope,
which the principal cannot read: with lexical statistics over readable records only, they change
nothing the principal sees, which the fixture thereby also exercises). Every query then runs
through the real pipeline with the gate open, and the gate stage's logged best signals become one
:class:`~.gate_calibration.GateFeatures` each, calibrated by the same procedure as LoCoMo.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from ..retrieve.request import SearchRequest
from .gate_calibration import GateFeatures, features_from_gate

DEFAULT_FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "gate_calibration.json"


def load_fixture(service, fixture: dict) -> dict[str, str]:
    """Write the fixture's records through memory_write; returns key -> record id."""
    principal = fixture["principal"]
    agent, user = principal["agent_id"], principal["user_id"]
    service.grant(agent, f"user:{user}", read=True, write=True, actor="calibration")
    service.grant("distractor-agent", "user:distractor", read=True, write=True, actor="calibration")
    session = service.start_session(agent_id=agent, user_id=user)
    ids: dict[str, str] = {}
    for item in fixture["records"]:
        result = session.call_tool("memory_write", {k: v for k, v in item.items() if k != "key"})
        if not result.get("ok"):
            raise RuntimeError(f"fixture record {item['key']} was refused: {result}")
        ids[item["key"]] = result["record_id"]
    other = service.start_session(agent_id="distractor-agent", user_id="distractor")
    for i, text in enumerate(fixture.get("distractors", [])):
        result = other.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"distractor_{i}"})
        if not result.get("ok"):
            raise RuntimeError(f"distractor {i} was refused: {result}")
    insert_generated_distractors(service, fixture)
    return ids


def generated_distractors(fixture: dict) -> list[str]:
    """The fixture's template distractors, expanded with a fixed seed."""
    spec = fixture.get("distractor_templates")
    if not spec:
        return []
    rng = random.Random(0)
    out = []
    for i in range(int(fixture.get("distractor_count", 0))):
        template = spec["templates"][i % len(spec["templates"])]
        out.append(template.format(**{slot: rng.choice(values) for slot, values in spec["slots"].items()}))
    return out


def insert_generated_distractors(service, fixture: dict) -> int:
    """Insert the generated distractors straight into the store (another user's scope, no embeddings)."""
    from ..clock import format_ts
    from ..store.records import Record, fts_sync, insert_record

    texts = generated_distractors(fixture)
    now = format_ts(service.clock.now())
    with service.store.transaction() as conn:
        for i, text in enumerate(texts):
            rid = f"mem_{0xd15700000000 + i:016x}"
            record = Record(
                id=rid, type="semantic", version=1, lineage_id=rid, content=text, subject_entity_id=None, attribute=None,
                subject=None, scope_kind="user", scope_id="distractor", source_kind="system", source_ref="calibration",
                creator_agent_id="calibration", evidence=None, evidence_session_id=None, evidence_turn=None, created_at=now,
                updated_at=now, event_at=None, expires_at=None, valid_from=None, valid_until=None, review_at=None,
                review_flagged_at=None, review_reason=None, confidence=0.95, status="confirmed",
            )
            insert_record(conn, record, None)
            fts_sync(conn, record.seq)
    return len(texts)


def collect(service, fixture: dict) -> list[GateFeatures]:
    """Every fixture query's gate signals, from searches run with the gate open."""
    principal = fixture["principal"]
    settings = service.settings.retrieval.model_copy(update={"cosine_floor": -1.0, "name_rest_cosine": -1.0, "name_model_floor": -1.0})
    queries = fixture["queries"]
    requests = [SearchRequest(agent_id=principal["agent_id"], user_id=principal["user_id"], query=item["query"], origin="eval")
                for item in queries]
    responses = service.retriever.search_batch(requests, settings=settings)
    return [features_from_gate(f"fixture#{i}:{item['query']}", bool(item["relevant"]), response.trace.stage("gate").outputs, "fixture")
            for i, (item, response) in enumerate(zip(queries, responses))]


def fixture_features(path: str | Path = DEFAULT_FIXTURE, *, settings=None, embedder=None) -> list[GateFeatures]:
    """Build a scratch store from the fixture and return its labelled samples."""
    from ..clock import FixedClock
    from ..service import MemoryService, shared_embedder
    from ..settings import load_settings

    fixture = json.loads(Path(path).read_text())
    settings = settings or load_settings()
    embedder = embedder or shared_embedder(settings.embedder)
    with tempfile.TemporaryDirectory() as tmp:
        service = MemoryService.open(Path(tmp) / "fixture.sqlite", settings, clock=FixedClock("2026-03-05T10:00:00Z"),
                                     embedder=embedder)
        try:
            load_fixture(service, fixture)
            return collect(service, fixture)
        finally:
            service.close()
