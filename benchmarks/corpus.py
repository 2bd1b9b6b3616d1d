"""Synthetic stores for the latency benchmarks.

Building 50K records through memory_write would take a quarter of an hour on this machine and
measure nothing new, so benchmarks bulk-load synthetic records with the store's own helpers
(record row, entity link, FTS row, change-feed bump) and real embeddings from the configured
model, then measure the real write or search path on top. Embeddings are cached under
benchmarks/out/ so repeated runs start fast.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np

from memory_core.clock import format_ts, parse_ts
from memory_core.ids import new_id
from memory_core.ingest.entity_resolution import principal_entity, link
from memory_core.store.records import Record, fts_sync, insert_record

OUT = Path(__file__).resolve().parent / "out"

SUBJECTS = ["hiking", "jazz", "sourdough", "chess", "Rust", "kayaking", "watercolour", "marathons", "birding", "pottery",
            "Kubernetes", "tango", "gardening", "astronomy", "climbing", "Go", "photography", "cycling", "sailing", "yoga"]
PLACES = ["Lisbon", "Kyoto", "Oslo", "Denver", "Nairobi", "Lima", "Hanoi", "Vienna", "Austin", "Perth", "Tallinn", "Porto"]
PEOPLE = ["Priya", "Marco", "Aiko", "Tomasz", "Lena", "Omar", "Grace", "Diego", "Nia", "Felix", "Sven", "Mei"]
TEMPLATES = [
    ("semantic", "The user has been into {s} since {y} and practises on {d}s."),
    ("semantic", "The user prefers {s} over {s2} when travelling to {p}."),
    ("semantic", "{n} is the user's friend who also likes {s}."),
    ("episodic", "On {date} the user went {s} in {p} with {n}."),
    ("episodic", "The user met {n} in {p} to talk about {s} on {date}."),
    ("procedural", "Before a {s} session the user checks the weather in {p} and packs water."),
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def synthetic_texts(count: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """(type, content, attribute) triples; content is varied enough that few are near-duplicates."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind, template = TEMPLATES[i % len(TEMPLATES)]
        s, s2 = rng.sample(SUBJECTS, 2)
        text = template.format(
            s=s, s2=s2, p=rng.choice(PLACES), n=rng.choice(PEOPLE), y=rng.randint(1995, 2025), d=rng.choice(DAYS),
            date=f"{rng.randint(1, 28)} {rng.choice(['March', 'June', 'October', 'January'])} {rng.randint(2019, 2026)}",
        )
        out.append((kind, f"{text} (note {i})", f"{s.lower()}_{i}"))
    return out


def embeddings_for(embedder, texts: list[str], tag: str) -> np.ndarray:
    OUT.mkdir(parents=True, exist_ok=True)
    cache = OUT / f"emb-{tag}-{len(texts)}-{embedder.model_version}.npy"
    if cache.exists():
        return np.load(cache)
    vectors = embedder.embed(texts)
    np.save(cache, vectors)
    return vectors


def bulk_load(service, count: int, *, users: int = 10, seed: int = 7, progress=None) -> dict:
    """Insert ``count`` synthetic records spread over ``users`` personal scopes; returns timing info."""
    texts = synthetic_texts(count, seed)
    began = time.perf_counter()
    vectors = embeddings_for(service.embedder, [t[1] for t in texts], f"s{seed}")
    embed_s = time.perf_counter() - began
    now_dt = service.clock.now()
    now = format_ts(now_dt)
    rng = random.Random(seed)
    began = time.perf_counter()
    with service.store.transaction() as conn:
        person = {u: principal_entity(conn, user_id=f"user{u}", now=now, actor="bench").entity_id for u in range(users)}
    for start in range(0, count, 2000):
        with service.store.transaction() as conn:
            for i in range(start, min(count, start + 2000)):
                kind, content, attribute = texts[i]
                user = i % users
                record_id = new_id("mem")
                event_at = format_ts(parse_ts("2024-01-01") + (now_dt - parse_ts("2024-01-01")) * rng.random()) if kind == "episodic" else None
                record = Record(
                    id=record_id, type=kind, version=1, lineage_id=record_id, content=content,
                    subject_entity_id=None if kind == "episodic" else person[user],
                    attribute=None if kind == "episodic" else attribute,
                    subject=None if kind == "episodic" else f"{person[user]}:{attribute}",
                    scope_kind="user", scope_id=f"user{user}", source_kind="user_statement", source_ref="bench",
                    creator_agent_id="bench", evidence=None, evidence_session_id=None, evidence_turn=None,
                    created_at=now, updated_at=now, event_at=event_at, expires_at=None, valid_from=None, valid_until=None,
                    review_at=None, review_flagged_at=None, review_reason=None, confidence=0.95, status="confirmed",
                    embed_model=service.embedder.model_name, embed_version=service.embedder.model_version,
                )
                insert_record(conn, record, vectors[i])
                if record.subject_entity_id:
                    link(conn, record_id, record.subject_entity_id, "subject")
                fts_sync(conn, record.seq)
                service.store.bump(conn, record.seq)
        if progress:
            progress(min(count, start + 2000), count)
    insert_s = time.perf_counter() - began
    service.index.refresh()
    return {"records": count, "users": users, "embed_s": round(embed_s, 2), "insert_s": round(insert_s, 2)}
