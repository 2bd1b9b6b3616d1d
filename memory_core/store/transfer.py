"""``agent-memory migrate-store SRC DST``: copy a whole store between backends, then verify it.

Either side may be an SQLite file or a PostgreSQL URL (SQLite → PostgreSQL to move up, back to
SQLite to take a store home). The destination must be empty (freshly migrated); the copy is one
destination transaction, so it lands completely or not at all.

Copied table by table, in key order, with every column both schemas share: records (with their
embeddings), entities and aliases, record links, procedures, grants, sessions and turns,
extraction runs, candidates and attempts, the event log, write log, search log and its settings,
the change feed and the store's metadata (embedder, records version). Not copied, but rebuilt on
the destination from what was copied: the full-text rows (FTS5 or tsvector, from the records) and
the pgvector column (from the embedding bytes). ``schema_migrations`` belongs to each backend.

The verification report gives, per table, the row count on each side and a SHA-256 over the rows
in key order (values normalised: bytes as hex, floats by ``repr``), computed by reading both
stores back after the commit; plus the full-text row count against the non-deleted records and,
on PostgreSQL, the vectors against the embeddings. ``ok`` is True only if everything matches.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConflictError
from .records import blob_to_vector, fts_sync, vector_literal

# (table, key columns for ORDER BY) in an order that satisfies every foreign key.
TABLES: tuple[tuple[str, str], ...] = (
    ("store_meta", "key"), ("entities", "id"), ("entity_aliases", "entity_id, alias_norm"), ("records", "seq"),
    ("record_entities", "rowid"), ("procedures", "record_id"), ("grants", "agent_id, scope_kind, scope_id"),
    ("sessions", "rowid"), ("turns", "session_id, turn"), ("extraction_runs", "rowid"),
    ("extraction_candidates", "run_id, attempt, idx"), ("extraction_attempts", "run_id, attempt"),
    ("events", "seq"), ("write_log", "seq"), ("search_log", "seq"), ("search_settings", "id"),
    ("index_changes", "version"), ("ambient_decisions", "seq"), ("session_context", "session_id"),
    ("host_memory_decisions", "rowid"), ("fitness_results", "rowid"),
    ("api_keys", "id"), ("host_sessions", "session_id"),
)
ROWID_TABLES = {"record_entities", "sessions", "extraction_runs", "host_memory_decisions", "fitness_results"}  # SQLite rowid ↔ PostgreSQL rowid column
BYTES_COLUMNS = {("records", "embedding"), ("search_log", "trace")}
IDENTITY = {"records": "seq", "events": "seq", "write_log": "seq", "search_log": "seq", "index_changes": "version",
            "record_entities": "rowid", "sessions": "rowid", "extraction_runs": "rowid", "ambient_decisions": "seq",
            "host_memory_decisions": "rowid", "fitness_results": "rowid"}
BATCH = 2000


@dataclass
class TransferReport:
    """Counts and checksums per table on both sides, and whether they all match."""

    source: str
    destination: str
    tables: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(t["match"] for t in self.tables) and all(c["match"] for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "source": self.source, "destination": self.destination, "tables": self.tables,
                "checks": self.checks}

    def text(self) -> str:
        lines = [f"{'table':24} {'source':>8} {'dest':>8}  checksum (sha256, first 16)  match"]
        for t in self.tables:
            lines.append(f"{t['table']:24} {t['source_rows']:>8} {t['destination_rows']:>8}  {t['source_sha256'][:16]}"
                         f"{'' if t['match'] else ' != ' + t['destination_sha256'][:16]:>16}  {'yes' if t['match'] else 'NO'}")
        for c in self.checks:
            lines.append(f"{c['check']}: {c['detail']} ({'ok' if c['match'] else 'MISMATCH'})")
        lines.append("verified: every table matches" if self.ok else "NOT VERIFIED: see the rows marked NO")
        return "\n".join(lines)


def _columns(store, table: str) -> list[str]:
    if store.backend == "postgresql":
        rows = store.query("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                           "AND table_name = ? ORDER BY ordinal_position", (table,))
        names = [r[0] for r in rows]
    else:
        names = [r[1] for r in store.query(f"PRAGMA table_info({table})")]
    return [n for n in names if n not in ("rowid", "embedding_vec")]


def _select(store, table: str, columns: list[str], order: str) -> str:
    rowid = "rowid, " if table in ROWID_TABLES else ""
    return f"SELECT {rowid}{', '.join(columns)} FROM {table} ORDER BY {order}"


def _rows(store, table: str, columns: list[str], order: str):
    """Every row of ``table`` in key order, in batches (keyset-free: OFFSET is fine for a one-off copy)."""
    sql = _select(store, table, columns, order)
    offset = 0
    while True:
        batch = store.query(f"{sql} LIMIT ? OFFSET ?", (BATCH, offset))
        if not batch:
            return
        yield batch
        offset += len(batch)


def _norm(value: Any) -> Any:
    if isinstance(value, memoryview):
        value = bytes(value)
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, float):
        return {"float": repr(value)}
    return value


def table_checksum(store, table: str, columns: list[str], order: str) -> tuple[int, str]:
    """(rows, SHA-256 of the rows in key order) for one table, the same way on either backend."""
    digest = hashlib.sha256()
    count = 0
    for batch in _rows(store, table, columns, order):
        for row in batch:
            values = list(row)
            if table in ROWID_TABLES:
                values = values[1:]  # row order already reflects it; its numbering may differ
            for i, column in enumerate(columns):
                if (table, column) in BYTES_COLUMNS and isinstance(values[i], str):
                    values[i] = values[i].encode()
            digest.update(json.dumps([_norm(v) for v in values], ensure_ascii=False, separators=(",", ":")).encode())
            digest.update(b"\n")
            count += 1
    return count, digest.hexdigest()


def _is_empty(store) -> bool:
    return all(store.scalar(f"SELECT COUNT(*) FROM {t}") == 0
               for t in ("records", "entities", "events", "sessions", "grants", "search_log", "write_log"))


def copy_store(source, destination) -> TransferReport:
    """Copy everything from ``source`` into the empty ``destination`` and verify it (see the module docstring)."""
    if not _is_empty(destination):
        raise ConflictError(f"the destination {destination.path} is not empty; migrate-store copies into a fresh store only",
                            destination=str(destination.path))
    report = TransferReport(str(source.path), str(destination.path))
    plan = []
    for table, order in TABLES:
        shared = [c for c in _columns(source, table) if c in set(_columns(destination, table))]
        plan.append((table, order, shared))
    to_pg = destination.backend == "postgresql"
    with destination.transaction() as conn:
        conn.execute("DELETE FROM store_meta")  # the fresh destination's own meta is replaced by the source's
        for table, order, columns in plan:
            insert_columns = (["rowid"] if table in ROWID_TABLES else []) + list(columns)
            merged_into = table == "entities" and "merged_into" in columns
            if to_pg and table == "records":
                insert_columns.append("embedding_vec")
            marks = ", ".join("?" * len(insert_columns))
            if to_pg and table == "records":
                marks = marks[:-1] + "?::vector"
            sql = f"INSERT INTO {table} ({', '.join(insert_columns)}) VALUES ({marks})"
            for batch in _rows(source, table, columns, order):
                out = []
                for row in batch:
                    values = list(row)
                    offset = 1 if table in ROWID_TABLES else 0
                    for i, column in enumerate(columns):
                        if (table, column) in BYTES_COLUMNS and isinstance(values[offset + i], str):
                            values[offset + i] = values[offset + i].encode()
                    if merged_into:  # self-reference: set after every entity exists
                        values[offset + columns.index("merged_into")] = None
                    if to_pg and table == "records":
                        blob = values[offset + columns.index("embedding")]
                        values.append(vector_literal(blob_to_vector(blob)) if blob is not None else None)
                    out.append(values)
                conn.executemany(sql, out)
            if merged_into:
                for batch in _rows(source, "entities", ["id", "merged_into"], "id"):
                    pairs = [(r[1], r[0]) for r in batch if r[1] is not None]
                    if pairs:
                        conn.executemany("UPDATE entities SET merged_into = ? WHERE id = ?", pairs)
        if to_pg:
            for table, column in IDENTITY.items():
                conn.execute_native(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                                    f"GREATEST((SELECT COALESCE(MAX({column}), 0) FROM {table}), 1))")
        for (seq,) in conn.execute("SELECT seq FROM records WHERE status != 'deleted' ORDER BY seq").fetchall():
            fts_sync(conn, seq)
    if to_pg:
        # planner statistics now, not when autovacuum gets to the new tables: without them the first
        # searches after a move planned the scope filter as one row (a 50K-record store's entity query
        # took 1.2 s instead of 4 ms). Memory text columns have statistics off, so no text is sampled.
        with destination.lock:
            destination.conn.execute_native("ANALYZE")
    for table, order, columns in plan:
        src_rows, src_sum = table_checksum(source, table, columns, order)
        dst_rows, dst_sum = table_checksum(destination, table, columns, order)
        report.tables.append({"table": table, "source_rows": src_rows, "destination_rows": dst_rows,
                              "source_sha256": src_sum, "destination_sha256": dst_sum,
                              "match": src_rows == dst_rows and src_sum == dst_sum})
    live = destination.scalar("SELECT COUNT(*) FROM records WHERE status != 'deleted'")
    fts = destination.scalar("SELECT COUNT(*) FROM records_fts")
    report.checks.append({"check": "full-text rows", "detail": f"{fts} rows for {live} non-deleted records", "match": fts == live})
    if to_pg:
        blobs = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding IS NOT NULL")
        vectors = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding_vec IS NOT NULL "
                                     "AND vector_dims(embedding_vec) = embed_dim")
        report.checks.append({"check": "pgvector column", "detail": f"{vectors} vectors for {blobs} embeddings",
                              "match": vectors == blobs})
        counted = destination.scalar("SELECT COALESCE(sum(n), 0) FROM record_counts")
        with_vector = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding_vec IS NOT NULL")
        report.checks.append({"check": "record counts", "detail": f"{counted} counted for {with_vector} records with a vector",
                              "match": counted == with_vector})
    return report
