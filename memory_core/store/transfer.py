"""``agent-memory migrate-store SRC DST``: copy a whole store between backends, then verify it.

Either side may be an SQLite file or a PostgreSQL URL (SQLite → PostgreSQL to move up, back to
SQLite to take a store home). The destination must be empty (freshly migrated).

Copied table by table, in key order, with every column both schemas share: records (with their
embeddings), entities and aliases, record links, procedures, grants, sessions and turns,
extraction runs, candidates and attempts, the event log, write log, search log and its settings,
the change feed and the store's metadata (embedder, records version). Not copied, but rebuilt on
the destination from what was copied: the full-text rows (FTS5 or tsvector, from the records) and
the pgvector column (from the embedding bytes). ``schema_migrations`` belongs to each backend.

A live source: every table is read from one snapshot (:func:`read_snapshot`: one REPEATABLE READ,
READ ONLY transaction on PostgreSQL, one read transaction on SQLite), so a record written while
the copy runs is either copied with everything that refers to it or not at all; writers are
never blocked. The destination: marked first (``store_meta.migrate_store_incomplete``, committed
on its own), then filled and verified in one transaction whose commit also removes the mark. So a
copy that fails or is killed leaves either nothing (a file the copy created is removed) or an
empty store that says it is an unfinished copy: ``MemoryService.open`` refuses it and ``doctor``
fails it until migrate-store is run again.

The verification report gives, per table, the row count on each side and a SHA-256 over the rows
in key order (values normalised: bytes as hex, floats by ``repr``): the source's read in the copy's
snapshot, the destination's read inside the copy's own transaction, before it commits; plus the
full-text row count against the non-deleted records and, on PostgreSQL, the vectors against the
embeddings. ``ok`` is True only if everything matches; if anything differs, the transaction is
rolled back and nothing is committed (``committed`` False).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConflictError, StoreUnusableError
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
    ("api_keys", "id"), ("host_sessions", "session_id"), ("mcp_session_owners", "session_id"),
)
ROWID_TABLES = {"record_entities", "sessions", "extraction_runs", "host_memory_decisions", "fitness_results"}  # SQLite rowid ↔ PostgreSQL rowid column
BYTES_COLUMNS = {("records", "embedding"), ("search_log", "trace")}
IDENTITY = {"records": "seq", "events": "seq", "write_log": "seq", "search_log": "seq", "index_changes": "version",
            "record_entities": "rowid", "sessions": "rowid", "extraction_runs": "rowid", "ambient_decisions": "seq",
            "host_memory_decisions": "rowid", "fitness_results": "rowid"}
BATCH = 2000
INCOMPLETE = "migrate_store_incomplete"  # store_meta key of a destination whose copy has not committed


@dataclass
class TransferReport:
    """Counts and checksums per table on both sides, and whether they all match."""

    source: str
    destination: str
    tables: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    committed: bool = False

    @property
    def ok(self) -> bool:
        return self.committed and all(t["match"] for t in self.tables) and all(c["match"] for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "committed": self.committed, "source": self.source, "destination": self.destination,
                "tables": self.tables, "checks": self.checks}

    def text(self) -> str:
        lines = [f"{'table':24} {'source':>8} {'dest':>8}  checksum (sha256, first 16)  match"]
        for t in self.tables:
            lines.append(f"{t['table']:24} {t['source_rows']:>8} {t['destination_rows']:>8}  {t['source_sha256'][:16]}"
                         f"{'' if t['match'] else ' != ' + t['destination_sha256'][:16]:>16}  {'yes' if t['match'] else 'NO'}")
        for c in self.checks:
            lines.append(f"{c['check']}: {c['detail']} ({'ok' if c['match'] else 'MISMATCH'})")
        lines.append("verified: every table matches" if self.ok else
                     "NOT VERIFIED: see the rows marked NO; nothing was committed to the destination")
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


def unfinished_copy(store) -> str | None:
    """What the mark of an unfinished migrate-store into ``store`` says (None: not such a target)."""
    return store.get_meta(INCOMPLETE)


def refuse_unfinished_copy(store) -> None:
    """Raise ``StoreUnusableError`` if ``store`` is the target of a migrate-store that did not finish."""
    mark = unfinished_copy(store)
    if mark is not None:
        raise StoreUnusableError(
            f"the store at {store.path} is the target of a migrate-store that did not finish ({mark}); it holds no "
            "complete copy: run agent-memory migrate-store again into it (it starts over) or remove it",
            path=str(store.path), problem="incomplete")


@contextmanager
def read_snapshot(store) -> Iterator[None]:
    """Every read of ``store`` inside the block sees one consistent state: one REPEATABLE READ, READ
    ONLY transaction on PostgreSQL, one read transaction on SQLite (taken at once, not at the first
    read). Writers in other processes go on meanwhile; the block sees none of their commits."""
    with store.lock:
        if store.backend == "postgresql":
            store.conn.execute_native("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        else:
            store.conn.execute("BEGIN DEFERRED")
        try:
            store.scalar("SELECT COUNT(*) FROM store_meta")  # the snapshot is taken by the first read
            yield
        finally:
            if store.backend == "postgresql":
                store.conn.execute_native("COMMIT")
            else:
                store.conn.execute("COMMIT")


class _NotVerified(Exception):
    """Raised inside the destination transaction to roll a copy back that does not check out."""


def copy_store(source, destination, *, progress: Callable[[str, int], None] | None = None) -> TransferReport:
    """Copy everything from ``source`` into the empty ``destination`` and verify it (see the module docstring).

    ``progress(table, rows)`` is called after each table is copied. Returns the report; when it is
    not ``ok`` nothing was committed and the destination keeps its unfinished-copy mark.
    """
    if unfinished_copy(source) is not None:
        raise ConflictError(f"the source {source.path} is itself an unfinished migrate-store target; copy from the "
                            "store it was being copied from", source=str(source.path))
    if not _is_empty(destination):
        raise ConflictError(f"the destination {destination.path} is not empty; migrate-store copies into a fresh store only",
                            destination=str(destination.path))
    report = TransferReport(str(source.path), str(destination.path))
    from ..clock import SystemClock, format_ts

    destination.set_meta(INCOMPLETE, f"copy from {source.path} started at {format_ts(SystemClock().now())}")
    with read_snapshot(source):
        plan = []
        for table, order in TABLES:
            shared = [c for c in _columns(source, table) if c in set(_columns(destination, table))]
            plan.append((table, order, shared))
        try:
            with destination.transaction() as conn:
                _copy_tables(source, destination, conn, plan, progress)
                _verify(source, destination, plan, report)
                if not all(t["match"] for t in report.tables) or not all(c["match"] for c in report.checks):
                    raise _NotVerified
        except _NotVerified:
            return report
    report.committed = True
    if destination.backend == "postgresql":
        # planner statistics now, not when autovacuum gets to the new tables: without them the first
        # searches after a move planned the scope filter as one row (a 50K-record store's entity query
        # took 1.2 s instead of 4 ms). Memory text columns have statistics off, so no text is sampled.
        with destination.lock:
            destination.conn.execute_native("ANALYZE")
    return report


def _copy_tables(source, destination, conn, plan, progress) -> None:
    """Every table of ``plan`` from the source into the destination transaction ``conn`` (the
    destination's own meta, its unfinished-copy mark included, replaced by the source's)."""
    to_pg = destination.backend == "postgresql"
    conn.execute("DELETE FROM store_meta")
    for table, order, columns in plan:
        insert_columns = (["rowid"] if table in ROWID_TABLES else []) + list(columns)
        merged_into = table == "entities" and "merged_into" in columns
        if to_pg and table == "records":
            insert_columns.append("embedding_vec")
        marks = ", ".join("?" * len(insert_columns))
        if to_pg and table == "records":
            marks = marks[:-1] + "?::vector"
        sql = f"INSERT INTO {table} ({', '.join(insert_columns)}) VALUES ({marks})"
        copied = 0
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
            copied += len(out)
        if merged_into:
            for batch in _rows(source, "entities", ["id", "merged_into"], "id"):
                pairs = [(r[1], r[0]) for r in batch if r[1] is not None]
                if pairs:
                    conn.executemany("UPDATE entities SET merged_into = ? WHERE id = ?", pairs)
        if progress is not None:
            progress(table, copied)
    if to_pg:
        for table, column in IDENTITY.items():
            conn.execute_native(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                                f"GREATEST((SELECT COALESCE(MAX({column}), 0) FROM {table}), 1))")
    for (seq,) in conn.execute("SELECT seq FROM records WHERE status != 'deleted' ORDER BY seq").fetchall():
        fts_sync(conn, seq)


def _verify(source, destination, plan, report: TransferReport) -> None:
    """Checksums of every table on both sides (the source in its snapshot, the destination inside
    the copy's transaction) and the derived rows, into ``report``."""
    for table, order, columns in plan:
        src_rows, src_sum = table_checksum(source, table, columns, order)
        dst_rows, dst_sum = table_checksum(destination, table, columns, order)
        report.tables.append({"table": table, "source_rows": src_rows, "destination_rows": dst_rows,
                              "source_sha256": src_sum, "destination_sha256": dst_sum,
                              "match": src_rows == dst_rows and src_sum == dst_sum})
    live = destination.scalar("SELECT COUNT(*) FROM records WHERE status != 'deleted'")
    fts = destination.scalar("SELECT COUNT(*) FROM records_fts")
    report.checks.append({"check": "full-text rows", "detail": f"{fts} rows for {live} non-deleted records", "match": fts == live})
    if destination.backend == "postgresql":
        blobs = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding IS NOT NULL")
        vectors = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding_vec IS NOT NULL "
                                     "AND vector_dims(embedding_vec) = embed_dim")
        report.checks.append({"check": "pgvector column", "detail": f"{vectors} vectors for {blobs} embeddings",
                              "match": vectors == blobs})
        counted = destination.scalar("SELECT COALESCE(sum(n), 0) FROM record_counts")
        with_vector = destination.scalar("SELECT COUNT(*) FROM records WHERE embedding_vec IS NOT NULL")
        report.checks.append({"check": "record counts", "detail": f"{counted} counted for {with_vector} records with a vector",
                              "match": counted == with_vector})


def migrate_store(source_target, destination_target, now: str, *,
                  progress: Callable[[str, int], None] | None = None) -> TransferReport:
    """Open ``source_target`` read-only and ``destination_target`` (created if missing), copy and verify.

    A destination file this call created is removed again when the copy does not commit; any
    other destination is left empty with its unfinished-copy mark (see the module docstring).
    """
    from .backend import is_postgres_url, open_store
    from .opening import store_file

    source = open_store(source_target, now, read_only=True)
    try:
        if source.pending_migrations:
            raise StoreUnusableError(
                f"the source {source.path} lacks migrations {source.pending_migrations} of this code; migrate it first "
                f"(agent-memory init --path {source.path}), then copy it", path=str(source.path), problem="outdated")
        created: Path | None = None
        if not is_postgres_url(destination_target):
            path = store_file(destination_target, must_exist=False)
            created = None if path.exists() else path
        destination = open_store(destination_target, now)
        report = None
        try:
            from contextlib import nullcontext

            from .opening import damage_guard

            with damage_guard(source.path) if source.backend == "sqlite" else nullcontext():
                report = copy_store(source, destination, progress=progress)
        finally:
            destination.close()
            if created is not None and (report is None or not report.committed):
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{created}{suffix}").unlink(missing_ok=True)
    finally:
        source.close()
    return report
