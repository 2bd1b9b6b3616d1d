"""Ingest LoCoMo conversations through the real write path, one user per conversation.

Each LoCoMo session becomes a memory session whose transcript holds the turns (both speakers are
people, so both are recorded as ``user`` turns), and each turn becomes an episodic record written
by :meth:`Ingestor.write` with ``source_kind=user_statement``, the turn itself as the evidence
quote, the session date as ``event_at`` and the turn id (``D3:7``) as ``source_ref``. Evidence
location, entailment, entity linking, duplicate search, FTS and the vector index all run as for
any write.

The write path reinforces a near-duplicate (cosine ≥ ``write.duplicate_threshold`` in the same
scope and type) instead of storing a copy, so short chit-chat turns ("Thanks!") merge into an
earlier record. The result keeps which turn ids each record stands for; metrics credit a record
with every turn merged into it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..clock import FixedClock
from ..ingest.writer import WriteRequest
from ..policy.scopes import Scope
from .locomo import Conversation

INGEST_AGENT = "locomo-writer"


class CachingEmbedder:
    """Wraps an embedder so texts embedded in bulk beforehand (:meth:`prime`) are served from memory.

    The write path embeds one text per call; priming the turn texts in batches of
    ``batch_size`` makes ingestion several times faster without changing any vector. Anything
    not primed (queries, unseen texts) goes to the wrapped model as usual.
    """

    def __init__(self, inner, batch_size: int = 64) -> None:
        self.inner = inner
        self.batch_size = batch_size
        self.model_name = inner.model_name
        self.model_version = inner.model_version
        self.dim = inner.dim
        self._cache: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def prime(self, texts: Iterable[str]) -> int:
        """Embed every not-yet-cached text in batches; returns how many were embedded."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            for text, vector in zip(chunk, self.inner.embed(chunk)):
                self._cache[text] = vector
        return len(todo)

    def save(self, path) -> None:
        """Keep the cached vectors on disk (``.npz``), tagged with the model, for the next run."""
        texts = list(self._cache)
        vectors = np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)
        np.savez(path, texts=np.array(texts, dtype=object), vectors=vectors,
                 model=np.array([self.model_name, self.model_version]))

    def load(self, path) -> int:
        """Add vectors saved by :meth:`save` for the same model; returns how many were loaded (0 if none fit)."""
        try:
            data = np.load(path, allow_pickle=True)
        except (OSError, ValueError):
            return 0
        if list(data["model"]) != [self.model_name, self.model_version]:
            return 0
        for text, vector in zip(data["texts"], data["vectors"]):
            self._cache.setdefault(str(text), vector)
        return len(data["texts"])

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self._cache]
        if missing:
            self.misses += len(missing)
            vectors = self.inner.embed([texts[i] for i in missing])
            for i, vector in zip(missing, vectors):
                out[i] = vector
        for i, text in enumerate(texts):
            if text in self._cache:
                out[i] = self._cache[text]
                self.hits += 1
        return out


@dataclass
class IngestResult:
    """Where each turn went, and what it cost."""

    user_id: str
    turn_to_record: dict[str, str] = field(default_factory=dict)
    covers: dict[str, list[str]] = field(default_factory=dict)  # record id -> turn ids it stands for
    created: int = 0
    reinforced: int = 0
    downgraded: int = 0
    seconds: float = 0.0
    write_ms: list[float] = field(default_factory=list)

    @property
    def merged_turns(self) -> list[str]:
        """Turn ids that were merged into an earlier record rather than stored on their own."""
        return [turn for turn, rec in self.turn_to_record.items() if self.covers[rec][0] != turn]

    def summary(self) -> dict:
        return {"user_id": self.user_id, "turns": len(self.turn_to_record), "records": len(self.covers),
                "created": self.created, "reinforced": self.reinforced, "downgraded": self.downgraded,
                "seconds": round(self.seconds, 2)}


def user_id_for(conversation: Conversation) -> str:
    """The memory user that holds a conversation (the sample id, e.g. ``conv-26``)."""
    return conversation.sample_id


def ingest_conversation(service, conversation: Conversation, clock: FixedClock, *, mention_speakers: bool = True,
                        agent_id: str = INGEST_AGENT) -> IngestResult:
    """Write every turn of ``conversation`` into ``user:<sample_id>``; returns the turn→record map.

    ``clock`` is moved to each session's date so records are created when their session happened.
    With ``mention_speakers`` each record names its speaker as an entity mention, as an agent
    recording the turn would; that is what gives the entity generator something to match.
    """
    began = time.perf_counter()
    user_id = user_id_for(conversation)
    scope = Scope("user", user_id)
    service.grant(agent_id, scope.key, read=True, write=True, actor="locomo-eval", reason="benchmark ingestion")
    access = service.access(agent_id, user_id)
    result = IngestResult(user_id)
    for number, turns in sorted(conversation.sessions.items()):
        clock.set(turns[0].at)
        session = service.start_session(agent_id=agent_id, user_id=user_id, session_id=f"{user_id}-s{number}")
        for turn in turns:
            content = turn.content()
            session.record_turn("user", content, at=turn.at)
            request = WriteRequest(
                type="episodic", content=content, scope=scope, source_kind="user_statement",
                agent_id=agent_id, user_id=user_id, actor=f"agent:{agent_id}",
                mentions=[turn.speaker] if mention_speakers else [], evidence=content, session_id=session.id,
                event_at=turn.at, source_ref=turn.dia_id, operation="memory_write",
            )
            outcome = service.ingestor.write(request, access)
            result.write_ms.append(outcome.total_ms)
            record_id = outcome.record.id
            result.turn_to_record[turn.dia_id] = record_id
            result.covers.setdefault(record_id, []).append(turn.dia_id)
            if outcome.outcome == "created":
                result.created += 1
            else:
                result.reinforced += 1
            if outcome.downgraded:
                result.downgraded += 1
    result.seconds = time.perf_counter() - began
    return result
