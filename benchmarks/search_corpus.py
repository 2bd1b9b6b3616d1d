"""A synthetic multi-user store for the search benchmark, bulk-loaded through the store helpers.

Going through memory_write for 50K records would take many minutes and measure the write path,
not search, so records are inserted directly with ``insert_record`` + entity links + ``fts_sync``
(exactly the rows the write path produces) with embeddings from the real packaged model computed
in batches and cached under benchmarks/out/. The process that opens the store afterwards rebuilds
its vector index from those rows, as any process does on startup.

Layout: the benchmark principal (agent ``bench`` for user ``u0``) can read ``user:u0`` (40% of the
records) and ``project:shared`` (20%); the other 40% belong to users u1..u9 and must be filtered
out on every search. People and project entities exist in the readable scopes and, under the same
names, in the other users' scopes.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from memory_core.clock import format_ts, parse_ts
from memory_core.ingest.entity_resolution import create_entity, link, principal_entity
from memory_core.policy.scopes import Scope
from memory_core.store.records import Record, fts_sync, insert_record

OUT = Path(__file__).resolve().parent / "out"
SEED = 11

PEOPLE = ("Priya Marco Aiko Tomasz Lena Omar Grace Diego Nia Felix Sven Mei Ravi Sofia Jonas Amara Kenji Leila Mateo Ines "
          "Hugo Zara Anders Chloe Yusuf Elena Kwame Hana Lucas Freya Idris Noor Pablo Ingrid Tariq Saskia Emeka Yuki Bruno Ayla").split()
PROJECTS = ("Atlas Borealis Cobalt Dynamo Ember Falcon Granite Helix Indigo Juniper Kestrel Lumen Meridian Nimbus Onyx "
            "Pioneer Quasar Raven Sierra Tundra").split()
PLACES = ("Lisbon Kyoto Oslo Denver Nairobi Lima Hanoi Vienna Austin Perth Tallinn Porto Seville Bergen Krakow Quito Hobart "
          "Valencia Tbilisi Halifax Marseille Leipzig Cusco Dunedin").split()
HOBBIES = "hiking kayaking climbing cycling sailing birding running skiing surfing bouldering fishing camping".split()
FOODS = ("sushi ramen tapas falafel dumplings risotto tacos pho curry paella gnocchi bibimbap ceviche pierogi laksa "
         "shakshuka").split()
MEALS = "breakfast lunch dinner brunch".split()
TOOLS = ("Kubernetes Terraform Postgres Redis Kafka Grafana Airflow Jenkins Docker Ansible Prometheus Spark Snowflake "
         "Vault Nginx").split()
TASKS = ("load testing", "incident review", "schema migrations", "release notes", "capacity planning", "log analysis",
         "cost reports", "access reviews", "backups", "code review")
TOPICS = ("budget", "roadmap", "hiring plan", "latency regression", "security audit", "launch date", "pricing", "on-call rota",
          "data retention", "vendor contract")
ISSUES = ("memory leak", "timeout", "race condition", "billing error", "outage", "slow query", "broken build", "data loss")
ADJS = "tense short productive tricky surprising long calm heated careful quick".split()
RELATIONS = "sister colleague manager neighbour mentor cousin friend landlord dentist coach".split()
ROLES = "tech lead designer product manager analyst reviewer sponsor".split()
MONTHS = "January February March April May June July August September October November December".split()

SEMANTIC = (
    "The user prefers {food} for {meal} and avoids {food2}.",
    "The user's favourite {hobby} spot is near {place}.",
    "{person} is the user's {relation} and lives in {place}.",
    "{person} works on {project} as the {role}.",
    "The user uses {tool} for {task} at work.",
    "Project {project} runs on {tool} and is owned by {person}.",
)
EPISODIC = (
    "On {date} the user and {person} discussed the {project} {topic} in {place}.",
    "The user went {hobby} near {place} with {person} on {date}.",
    "{person} reported a {issue} in {project} on {date}; the review was {adj}.",
    "On {date} the user decided to move {project} from {tool} to {tool2} after a {adj} meeting.",
)
PROCEDURAL = (
    "To deploy {project}, run the {tool} pipeline, finish {task} and tell {person}.",
    "When planning {hobby} near {place}, check the forecast and book {food} places early.",
)
QUERIES = (
    "What does the user like to eat for {meal}?",
    "Who is {person}?",
    "What did the user discuss with {person} about {project}?",
    "Where does the user like to go {hobby}?",
    "How do we deploy {project}?",
    "Which tool does the user use for {task}?",
    "What happened with the {project} {topic}?",
    "Any problems reported in {project} recently?",
    "Has the user been to {place}?",
    "Why did we move {project} off {tool}?",
)
OFF_TOPIC = (
    "What is the boiling point of liquid nitrogen?",
    "Explain lattice gauge theory in quantum chromodynamics.",
    "Best way to fold a fitted sheet",
    "Translate good morning into Icelandic",
    "How many moons does Neptune have?",
)


def _fill(template: str, rng: random.Random) -> str:
    a, b = rng.sample(FOODS, 2)
    t1, t2 = rng.sample(TOOLS, 2)
    return template.format(
        food=a, food2=b, meal=rng.choice(MEALS), hobby=rng.choice(HOBBIES), place=rng.choice(PLACES),
        person=rng.choice(PEOPLE), relation=rng.choice(RELATIONS), project=rng.choice(PROJECTS), role=rng.choice(ROLES),
        tool=t1, tool2=t2, task=rng.choice(TASKS), topic=rng.choice(TOPICS), issue=rng.choice(ISSUES), adj=rng.choice(ADJS),
        date=f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2024, 2026)}",
    )


def texts(count: int, seed: int = SEED) -> list[tuple[str, str]]:
    """(type, content) pairs: half semantic, 40% episodic, 10% procedural."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        roll = i % 10
        kind, pool = ("semantic", SEMANTIC) if roll < 5 else ("episodic", EPISODIC) if roll < 9 else ("procedural", PROCEDURAL)
        out.append((kind, _fill(rng.choice(pool), rng)))
    return out


def queries(count: int, seed: int = SEED + 1) -> list[str]:
    """Benchmark queries: about nine in ten on-topic (many naming an entity), the rest off-topic."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append(OFF_TOPIC[i // 10 % len(OFF_TOPIC)] if i % 10 == 9 else _fill(QUERIES[i % len(QUERIES)], rng))
    return out


def embeddings(embedder, contents: list[str], progress=None) -> np.ndarray:
    """Embed ``contents`` in batches, cached per model version (a prefix of a cached set is reused)."""
    OUT.mkdir(parents=True, exist_ok=True)
    for cached in sorted(OUT.glob(f"search-emb-{SEED}-*-{embedder.model_version}.npy")):
        size = int(cached.stem.split("-")[3])
        if size >= len(contents):
            return np.load(cached, mmap_mode="r")[: len(contents)]
    chunks = []
    for start in range(0, len(contents), 1024):
        chunks.append(embedder.embed(contents[start : start + 1024]))
        if progress:
            progress(min(len(contents), start + 1024), len(contents))
    vectors = np.concatenate(chunks) if chunks else np.zeros((0, embedder.dim), dtype=np.float32)
    np.save(OUT / f"search-emb-{SEED}-{len(contents)}-{embedder.model_version}.npy", vectors)
    return vectors


def build(service, count: int, progress=None, real_vectors: int | None = None) -> dict:
    """Fill an empty store with ``count`` records; returns what was built.

    With ``real_vectors`` set below ``count``, only the first ``real_vectors`` records are
    embedded for real; every later record gets a synthetic vector, a noisy copy of one of those
    real vectors (``synthetic_vectors.noisy_copies``): the 1M store cannot be embedded in time on
    this machine, and the index only needs vectors distributed like real ones.
    """
    items = texts(count)
    real = count if real_vectors is None else min(count, real_vectors)
    vectors = embeddings(service.embedder, [c for _, c in items[:real]], progress)
    if real < count:
        from .synthetic_vectors import noisy_copies

        vectors = np.concatenate([np.asarray(vectors), noisy_copies(np.asarray(vectors), count - real, seed=SEED)])
    now_dt = service.clock.now()
    now = format_ts(now_dt)
    start = parse_ts("2024-01-01")
    rng = random.Random(SEED + 2)
    scopes = [Scope("user", "u0")] * 4 + [Scope("project", "shared")] * 2 + [Scope("user", f"u{i}") for i in range(1, 10)]
    weights = [1.0] * 6 + [4.0 / 9.0] * 9  # 40% u0, 20% shared, 40% spread over u1..u9
    entities: dict[tuple[str, str], str] = {}
    with service.store.transaction() as conn:
        for scope in set(scopes):
            if scope.kind == "user":
                entities[(scope.key, "__principal__")] = principal_entity(conn, user_id=scope.id, now=now, actor="bench").entity_id
            for name in PEOPLE:
                entities[(scope.key, name)] = create_entity(conn, name=name, kind="person", scope=scope, now=now, actor="bench")
            for name in PROJECTS:
                entities[(scope.key, name)] = create_entity(conn, name=name, kind="project", scope=scope, now=now,
                                                            actor="bench", aliases=[f"project {name}"])
    for begin in range(0, count, 2000):
        with service.store.transaction() as conn:
            for i in range(begin, min(count, begin + 2000)):
                kind, content = items[i]
                scope = rng.choices(scopes, weights)[0]
                named = [w.strip(",.;?") for w in content.split() if w.strip(",.;?") in PEOPLE or w.strip(",.;?") in PROJECTS]
                subject = None
                if kind != "episodic":
                    subject = entities.get((scope.key, named[0])) if named else entities.get((scope.key, "__principal__"))
                    subject = subject or entities[(scope.key, PROJECTS[0])]
                created = start + (now_dt - start) * rng.random()
                record = Record(
                    id=f"mem_{i:016x}", type=kind, version=1, lineage_id=f"mem_{i:016x}", content=content,
                    subject_entity_id=subject, attribute=None if kind == "episodic" else f"fact_{i}",
                    subject=None if kind == "episodic" else f"{subject}:fact_{i}", scope_kind=scope.kind, scope_id=scope.id,
                    source_kind="user_statement", source_ref="bench", creator_agent_id="bench", evidence=None,
                    evidence_session_id=None, evidence_turn=None, created_at=format_ts(created), updated_at=format_ts(created),
                    event_at=format_ts(created) if kind == "episodic" else None, expires_at=None, valid_from=None,
                    valid_until=None, review_at=None, review_flagged_at=None, review_reason=None, confidence=0.95,
                    status="confirmed", embed_model=service.embedder.model_name, embed_version=service.embedder.model_version,
                )
                insert_record(conn, record, np.asarray(vectors[i]))
                if subject:
                    link(conn, record.id, subject, "subject")
                for name in named:
                    entity = entities.get((scope.key, name))
                    if entity and entity != subject:
                        link(conn, record.id, entity, "mention")
                fts_sync(conn, record.seq)
    service.grant("bench", "user:u0", read=True, write=False, actor="bench")
    service.grant("bench", "project:shared", read=True, write=False, actor="bench")
    readable = service.store.scalar(
        "SELECT COUNT(*) FROM records WHERE (scope_kind = 'user' AND scope_id = 'u0') OR (scope_kind = 'project' AND scope_id = 'shared')"
    )
    return {"records": count, "readable_by_principal": int(readable), "entities": len(entities), "real_vectors": real,
            "synthetic_vectors": count - real}
