"""Building a LoCoMo store and asking its questions: shared by the benchmark and ``agent-memory calibrate``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from ..clock import FixedClock
from ..retrieve.request import SearchRequest
from .ingest import CachingEmbedder, IngestResult, ingest_conversation, user_id_for
from .locomo import Conversation, named_off_topic, off_topic_partner
from .retrieval_eval import QuestionOutcome, gate_features, observe

READER = "locomo-reader"


@dataclass
class LocomoStore:
    """An opened store holding LoCoMo conversations, one user each."""

    service: object
    clock: FixedClock
    ingests: dict[str, IngestResult]
    timings: dict[str, float] = field(default_factory=dict)


def build_store(conversations: list[Conversation], path: str | Path, *, settings=None, batch_size: int = 64,
                mention_speakers: bool = True, prime_questions: bool = True, vector_cache: str | Path | None = None,
                embedder=None, progress=print) -> LocomoStore:
    """Create a fresh store at ``path`` and write every conversation into it.

    Turn texts (and, with ``prime_questions``, the questions) are embedded in batches first; the
    write path then gets the same vectors from a cache instead of one model call per turn. With
    ``vector_cache`` (an ``.npz`` file) those vectors are kept between runs of the same model.
    ``embedder`` replaces the configured model (tests pass a small fake).
    """
    from ..service import MemoryService, shared_embedder
    from ..settings import load_settings

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    settings = settings or load_settings(extraction={"extract_on_session_end": False})
    timings: dict[str, float] = {}
    began = time.perf_counter()
    embedder = CachingEmbedder(embedder or shared_embedder(settings.embedder), batch_size=batch_size)
    timings["model_load_s"] = time.perf_counter() - began
    timings["vectors_from_cache"] = embedder.load(vector_cache) if vector_cache and Path(vector_cache).exists() else 0
    began = time.perf_counter()
    timings["texts_embedded"] = embedder.prime(t.content() for c in conversations for t in c.turns)
    timings["batch_embedding_s"] = time.perf_counter() - began
    if vector_cache and timings["texts_embedded"]:
        embedder.save(vector_cache)  # turns only: questions stay out, so a later run can embed them per search
    if prime_questions:
        began = time.perf_counter()
        embedder.prime(q.text for c in conversations for q in c.answerable())
        embedder.prime(q.text for i in range(len(conversations)) if len(conversations) > 1
                       for q in named_off_topic(conversations, i))
        timings["question_embedding_s"] = time.perf_counter() - began
    clock = FixedClock(conversations[0].turns[0].at)
    service = MemoryService.open(path, settings, clock=clock, embedder=embedder, llm=None)
    began = time.perf_counter()
    ingests = {}
    for conv in conversations:
        ingests[conv.sample_id] = ingest_conversation(service, conv, clock, mention_speakers=mention_speakers)
        if progress:
            progress(f"  ingested {conv.sample_id}: {ingests[conv.sample_id].summary()}")
    timings["ingest_s"] = time.perf_counter() - began
    for conv in conversations:
        service.grant(READER, f"user:{user_id_for(conv)}", read=True, write=False, actor="locomo-eval")
    return LocomoStore(service, clock, ingests, timings)


def ask_all(store: LocomoStore, conversations: list[Conversation], *, settings=None, label: str = "default",
            off_topic: bool = True, progress=print) -> dict:
    """Ask every answerable question of its own store and (``off_topic``) of another conversation's,
    both as asked and rewritten to name this store's speakers (:func:`.locomo.named_off_topic`).

    Each conversation's questions go to the pipeline in one batch (``Retriever.search_batch``, the
    entry point the memory_search tool's requests also take), with the retrieval ``settings`` given
    (a variant) or the shipped ones; each search is read back from its log row.
    """

    service, clock = store.service, store.clock
    outcomes: list[QuestionOutcome] = []
    foreign: list[tuple] = []
    named: list[tuple] = []
    features = []
    began = time.perf_counter()
    for index, conv in enumerate(conversations):
        user = user_id_for(conv)
        clock.set(conv.last_at + timedelta(days=1))
        partner = off_topic_partner(conversations, index) if off_topic else None
        asked = ([("answerable", q) for q in conv.answerable()] + [("off_topic", q) for q in (partner.answerable() if partner else [])]
                 + [("named", q) for q in (named_off_topic(conversations, index) if partner else [])])
        requests = [SearchRequest(agent_id=READER, user_id=user, query=q.text, limit=10, origin="eval") for _, q in asked]
        responses = service.retriever.search_batch(requests, settings=settings)
        covers = store.ingests[conv.sample_id].covers
        for (kind, q), response in zip(asked, responses):
            obs = observe(service, response.search_id)
            if kind == "answerable":
                outcomes.append(QuestionOutcome.score(q, obs, covers))
                features.append(gate_features(q.qid, True, obs))
            elif kind == "off_topic":
                foreign.append((q, obs))
                features.append(gate_features(f"{user}<-{q.qid}", False, obs))
            else:
                named.append((q, obs))
                features.append(gate_features(f"{user}<-{q.qid}", False, obs, doubted=bool(q.doubts)))
        if progress:
            progress(f"  [{label}] {conv.sample_id}: {len(conv.answerable())} answerable"
                     + (f", {len(partner.answerable())} off-topic from {partner.sample_id}" if partner else ""))
    # (an invalid question would raise before its conversation's batch ran; none is counted as an error any more)
    return {"outcomes": outcomes, "off_topic": foreign, "named_off_topic": named, "features": features, "errors": 0,
            "seconds": time.perf_counter() - began}
