"""Bulk-load an SQLite store into a fresh PostgreSQL store with COPY, verify it, compare searches.

Used by :mod:`benchmarks.pg_million` (its docstring says why ``migrate-store`` is not used at 1M
records and what the loaded store is checked against). The store is exactly what the backend
writes: schema from ``PgStore.open``, the schema's secondary indexes dropped for the load and
re-created from their own ``pg_indexes`` definitions, ``embedding_vec`` from the embedding bytes,
``records_fts`` from :func:`memory_core.store.pg.fulltext.tsvector_literal`.
"""

from __future__ import annotations

import json
import random
import sqlite3
import struct
import time
from pathlib import Path

import numpy as np

from memory_core import load_settings
from memory_core.store.backend import open_store
from memory_core.store.pg.fulltext import tsvector_literal
from memory_core.store.pg.schema import RECOUNT
from memory_core.store.records import fts_text_for, vector_literal
from memory_core.store.transfer import IDENTITY, ROWID_TABLES, TABLES
from memory_core.store.urls import sqlite_uri

from . import search_corpus
from .stats import load_average

CLOCK = "2026-03-05T10:00:00Z"
BULK = {"records", "record_entities"}  # COPY; every other table is small and inserted row by row
PG_TYPES = {"text": "text", "bigint": "int8", "double precision": "float8", "bytea": "bytea", "vector": "vector"}


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg} (load {load_average()[0]})", flush=True)

# -- loading -----------------------------------------------------------------------------------

def _pg_columns(conn, table: str) -> dict[str, str]:
    rows = conn.execute("SELECT column_name, data_type, udt_name FROM information_schema.columns "
                        "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position", (table,))
    return {name: ("vector" if udt == "vector" else dtype) for name, dtype, udt in rows.fetchall()}


def _fts_rows(lite: sqlite3.Connection, limit: int | None):
    """(seq, tsvector literal) per non-deleted record, from the same text ``fts_text_for`` assembles."""
    entities = {row[0]: (row[1], row[2], row[3]) for row in lite.execute("SELECT id, scope_kind, scope_id, canonical_name FROM entities")}
    aliases: dict[str, list[str]] = {}
    for entity_id, alias in lite.execute("SELECT entity_id, alias FROM entity_aliases"):
        aliases.setdefault(entity_id, []).append(alias)
    links: dict[str, list[str]] = {}
    for record_id, entity_id in lite.execute("SELECT record_id, entity_id FROM record_entities"):
        links.setdefault(record_id, []).append(entity_id)
    procedures = {row[0]: (row[1], row[2]) for row in lite.execute("SELECT record_id, name, trigger FROM procedures")}
    sql = ("SELECT seq, id, content, attribute, subject_entity_id, scope_kind, scope_id FROM records "
           "WHERE status != 'deleted' ORDER BY seq" + (f" LIMIT {int(limit)}" if limit else ""))
    for seq, rid, content, attribute, subject_id, kind, scope in lite.execute(sql):
        words = []
        if subject_id and subject_id in entities and entities[subject_id][:2] == (kind, scope):
            words.append(entities[subject_id][2])
        if attribute:
            words.append(attribute.replace("_", " "))
        names = sorted({a for e in links.get(rid, ()) if e in entities and entities[e][:2] == (kind, scope) for a in aliases.get(e, ())})
        if rid in procedures:
            content = f"{procedures[rid][0]}. {procedures[rid][1]}"
        yield seq, tsvector_literal(content, " ".join(words), " ".join(names))


def _vector_dumper(conn):
    """A binary COPY dumper for pgvector's type: uint16 dim, uint16 0, float32 big-endian values."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    oid = conn.execute("SELECT oid FROM pg_type WHERE typname = 'vector'").fetchone()[0]

    class VectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj):
            vec = np.frombuffer(obj, dtype=np.float32)
            return struct.pack(">HH", vec.shape[0], 0) + vec.astype(">f4").tobytes()

    VectorDumper.oid = oid
    conn.adapters.register_dumper(None, VectorDumper)
    return oid


def bulk_load(source: Path, url: str, limit: int | None) -> dict:
    """Copy the SQLite store at ``source`` into the fresh PostgreSQL store at ``url`` (see the module docstring)."""
    import psycopg

    timings: dict[str, float] = {}
    began = time.perf_counter()
    open_store(url, CLOCK).close()  # the backend's own schema
    lite = sqlite3.connect(sqlite_uri(source, mode="ro"), uri=True)
    lite_columns = {t: [r[1] for r in lite.execute(f"PRAGMA table_info({t})")] for t, _ in TABLES}
    with psycopg.connect(url) as conn:
        vector_oid = _vector_dumper(conn)
        indexes = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
                               "AND tablename IN ('records', 'records_fts', 'record_entities') "
                               "AND indexname NOT IN (SELECT conname FROM pg_constraint)").fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("SET session_replication_role = replica")
        conn.execute("DELETE FROM store_meta")
        for table, order in TABLES:
            if not lite_columns[table]:
                continue  # a table the source's schema does not have yet (stays empty)
            pg_cols = _pg_columns(conn, table)
            columns = [c for c in lite_columns[table] if c in pg_cols and c != "rowid"]
            select_cols = (["rowid"] if table in ROWID_TABLES else []) + columns
            insert_cols = list(select_cols)
            select = f"SELECT {', '.join(select_cols)} FROM {table} ORDER BY {order}"
            if table == "records" and limit:
                select += f" LIMIT {int(limit)}"
            if table == "record_entities" and limit:
                select = (f"SELECT {', '.join('re.' + c for c in select_cols)} FROM record_entities re JOIN "
                          f"(SELECT id FROM records ORDER BY seq LIMIT {int(limit)}) r ON r.id = re.record_id ORDER BY re.rowid")
            t0 = time.perf_counter()
            if table in BULK:
                types = [PG_TYPES[pg_cols.get(c, "bigint")] for c in insert_cols]
                vec_at = None
                if table == "records":
                    insert_cols.append("embedding_vec")
                    types.append(vector_oid)
                    vec_at = select_cols.index("embedding")
                with conn.cursor().copy(f"COPY {table} ({', '.join(insert_cols)}) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(types)
                    for row in lite.execute(select):
                        if vec_at is not None:
                            row = (*row, row[vec_at])
                        copy.write_row(row)
            else:
                rows = lite.execute(select).fetchall()
                if rows:
                    marks = ", ".join(["%s"] * len(insert_cols))
                    conn.cursor().executemany(f"INSERT INTO {table} ({', '.join(insert_cols)}) VALUES ({marks})", rows)
            timings[f"copy_{table}_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        with conn.cursor().copy("COPY records_fts (rowid, lexemes) FROM STDIN") as copy:
            for row in _fts_rows(lite, limit):
                copy.write_row(row)
        timings["fulltext_rows_s"] = round(time.perf_counter() - t0, 1)
        for table, column in IDENTITY.items():
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                         f"GREATEST((SELECT COALESCE(MAX({column}), 0) FROM {table}), 1))")
        conn.execute("SET session_replication_role = DEFAULT")
        # the per-scope counts the hard filter reads are kept by triggers, which were off: recount
        t0 = time.perf_counter()
        conn.execute("DELETE FROM record_counts")
        conn.execute(RECOUNT)
        timings["record_counts_s"] = round(time.perf_counter() - t0, 1)
        conn.commit()
        _log(f"rows copied in {round(time.perf_counter() - began, 1)} s")
        t0 = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in indexes:
            conn.execute(definition)
        conn.commit()
        timings["secondary_indexes_s"] = round(time.perf_counter() - t0, 1)
    with psycopg.connect(url, autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute("VACUUM ANALYZE")  # what autovacuum would do soon after: visibility map for index-only scans
        timings["vacuum_analyze_s"] = round(time.perf_counter() - t0, 1)
    timings["total_s"] = round(time.perf_counter() - began, 1)
    timings["verification"] = verify(lite, url, limit)
    lite.close()
    return timings


def verify(lite: sqlite3.Connection, url: str, limit: int | None, sample: int = 300) -> dict:
    """Counts per table, and a random sample of records checked column by column (vector and full text too)."""
    store = open_store(url, CLOCK)
    out: dict = {"tables": {}, "ok": True}
    try:
        for table, _ in TABLES:
            if not [r for r in lite.execute(f"PRAGMA table_info({table})")]:
                continue
            src = lite.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            if limit and table == "records":
                src = min(src, limit)
            if limit and table == "record_entities":
                src = lite.execute(f"SELECT COUNT(*) FROM record_entities re JOIN (SELECT id FROM records ORDER BY seq LIMIT {int(limit)}) r "
                                   "ON r.id = re.record_id").fetchone()[0]
            dst = store.scalar(f"SELECT COUNT(*) FROM {table}")
            out["tables"][table] = [src, dst]
            out["ok"] &= src == dst
        live = store.scalar("SELECT COUNT(*) FROM records WHERE status != 'deleted'")
        fts = store.scalar("SELECT COUNT(*) FROM records_fts")
        out["fulltext_rows"] = [fts, live]
        out["ok"] &= fts == live
        # the hard filter's counts (recounted after the load) against the rows themselves
        counted = store.scalar("SELECT COALESCE(sum(n), 0) FROM record_counts")
        with_vector = store.scalar("SELECT COUNT(*) FROM records WHERE embedding_vec IS NOT NULL")
        out["record_counts"] = [counted, with_vector]
        out["ok"] &= counted == with_vector
        columns = [r[1] for r in lite.execute("PRAGMA table_info(records)")]
        top = store.scalar("SELECT MAX(seq) FROM records")
        seqs = random.Random(7).sample(range(1, top + 1), min(sample, top))
        bad = 0
        for seq in seqs:
            a = lite.execute(f"SELECT {', '.join(columns)} FROM records WHERE seq = ?", (seq,)).fetchone()
            b = store.query_one(f"SELECT {', '.join(columns)}, embedding_vec::text FROM records WHERE seq = ?", (seq,))
            if a is None and b is None:
                continue
            vec_ok = np.array_equal(np.array(json.loads(b[-1]), dtype=np.float32), np.frombuffer(a[columns.index("embedding")], dtype=np.float32))
            same = all((bytes(y) if isinstance(y, memoryview) else y) == x for x, y in zip(a, b[:-1]))
            with store.lock:
                text = fts_text_for(store.conn, seq)
            fts_ok = text is None or bool(store.scalar("SELECT lexemes = ?::tsvector FROM records_fts WHERE rowid = ?",
                                                       (tsvector_literal(*text), seq)))
            bad += not (vec_ok and same and fts_ok)
        out["sampled_records"], out["sampled_mismatches"] = len(seqs), bad
        out["ok"] &= bad == 0
    finally:
        store.close()
    return out


def compare_with_sqlite(source: Path, url: str, queries: int = 8) -> dict:
    """A few searches on both stores, before the HNSW index exists: the principal's exact dense top-10
    (numpy over the SQLite blobs against pgvector) and the lexical doclists of the queries' words
    (FTS5 against the tsvector rows)."""
    from memory_core.embed import build_embedder
    from memory_core.store.pg.fulltext import doclist, tokens

    embedder = build_embedder(load_settings().embedder)
    texts = [q for q in search_corpus.queries(queries * 2) if tokens(q)][:queries]
    vectors = embedder.embed(texts)
    lite = sqlite3.connect(sqlite_uri(source, mode="ro"), uri=True)
    readable_sql = "((scope_kind = 'user' AND scope_id = 'u0') OR (scope_kind = 'project' AND scope_id = 'shared')) AND status = 'confirmed'"
    store = open_store(url, CLOCK)
    top_seq = store.scalar("SELECT MAX(seq) FROM records")  # a --limit trial holds the first records only
    seqs, blobs = [], []
    for seq, blob in lite.execute(f"SELECT seq, embedding FROM records WHERE {readable_sql} AND embedding IS NOT NULL AND seq <= ?",
                                  (top_seq,)):
        seqs.append(seq)
        blobs.append(blob)
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    del blobs
    seqs_arr = np.array(seqs)
    dense_same, dense_ties_same, lexical_same, lexical_terms = 0, 0, 0, 0
    try:
        for text, vec in zip(texts, vectors):
            scores = matrix @ vec
            top = np.argsort(-scores, kind="stable")[:10]
            lite10 = set(int(s) for s in seqs_arr[top])
            rows = store.query("SELECT seq, -(embedding_vec <#> ?::vector) FROM records WHERE " + readable_sql
                               + " ORDER BY embedding_vec <#> ?::vector LIMIT 10", [vector_literal(vec), vector_literal(vec)])
            pg10 = {int(r[0]) for r in rows}
            dense_same += pg10 == lite10
            floor = float(scores[top[-1]]) - 1e-5
            dense_ties_same += all(float(r[1]) >= floor for r in rows) and len(rows) == len(top)
            for term in sorted(set(tokens(text)))[:4]:
                lite_docs = [r[0] for r in lite.execute("SELECT rowid FROM records_fts WHERE records_fts MATCH ? AND rowid <= ? "
                                                        "ORDER BY rowid", ('"' + term + '"', top_seq))]
                with store.lock:
                    pg_docs = doclist(store.conn, term).tolist()
                lexical_terms += 1
                lexical_same += lite_docs == pg_docs
    finally:
        store.close()
        lite.close()
    return {"queries": len(texts), "dense_top10_identical": dense_same, "dense_top10_same_scores": dense_ties_same,
            "lexical_terms": lexical_terms, "lexical_doclists_identical": lexical_same}
