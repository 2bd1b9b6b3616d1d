"""The record envelope and its rows.

:class:`Record` mirrors one ``records`` row. ``to_public`` is what tools return to a model (no
embedding, no internal bookkeeping); ``to_dict`` is the full envelope for the admin app.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .. import display
from .batching import batches, fetch_together
from .db import dumps, loads

RECORD_TYPES = ("semantic", "episodic", "procedural")
STATUSES = ("provisional", "confirmed", "superseded", "expired", "deleted")
LIVE_STATUSES = ("provisional", "confirmed")
HISTORICAL_STATUSES = ("provisional", "confirmed", "superseded", "expired")


@dataclass
class Record:
    id: str
    type: str
    version: int
    lineage_id: str
    content: str
    subject_entity_id: str | None
    attribute: str | None
    subject: str | None
    scope_kind: str
    scope_id: str
    source_kind: str
    source_ref: str | None
    creator_agent_id: str | None
    evidence: str | None
    evidence_session_id: str | None
    evidence_turn: int | None
    created_at: str
    updated_at: str
    event_at: str | None
    expires_at: str | None
    valid_from: str | None
    valid_until: str | None
    review_at: str | None
    review_flagged_at: str | None
    review_reason: str | None
    confidence: float
    status: str
    observations: int = 1
    last_observed_session: str | None = None
    supersedes_id: str | None = None
    superseded_by_id: str | None = None
    conflicts_with: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    embed_model: str | None = None
    embed_version: str | None = None
    deleted_at: str | None = None
    seq: int | None = None
    entity_links: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scope(self) -> str:
        return f"{self.scope_kind}:{self.scope_id}"

    def to_dict(self) -> dict[str, Any]:
        """Every envelope field (JSON-able), without the embedding blob."""
        data = asdict(self)
        data["scope"] = self.scope
        return data

    def to_public(self) -> dict[str, Any]:
        """The fields a model sees from memory_get."""
        keep = (
            "id", "type", "version", "content", "attribute", "scope", "source_kind", "source_ref",
            "evidence", "created_at", "event_at", "expires_at", "valid_from", "valid_until",
            "review_at", "review_flagged_at", "confidence", "status", "supersedes_id",
            "superseded_by_id", "conflicts_with", "tags",
        )
        data = self.to_dict()
        out = {k: data[k] for k in keep}
        out["entities"] = [
            {"id": link["entity_id"], "name": link["name"], "kind": link["kind"], "role": link["role"]}
            for link in self.entity_links
        ]
        return out

    def _repr_html_(self) -> str:
        # Notebook display of this version alone; service.show_record(id) adds the lineage.
        return display.html(self)

    def to_dataframe(self):
        """This record as a one-row pandas DataFrame."""
        return display.frame(self)


_COLUMNS = (
    "seq", "id", "type", "version", "lineage_id", "content", "subject_entity_id", "attribute", "subject",
    "scope_kind", "scope_id", "source_kind", "source_ref", "creator_agent_id", "evidence",
    "evidence_session_id", "evidence_turn", "created_at", "updated_at", "event_at", "expires_at",
    "valid_from", "valid_until", "review_at", "review_flagged_at", "review_reason", "confidence",
    "status", "observations", "last_observed_session", "supersedes_id", "superseded_by_id",
    "conflicts_with", "tags", "embed_model", "embed_version", "deleted_at",
)
SELECT_COLUMNS = ", ".join(f"r.{c}" for c in _COLUMNS)


def record_from_row(row: sqlite3.Row) -> Record:
    # Rows selected with SELECT_COLUMNS come in _COLUMNS order; zip is several times faster than
    # looking up 37 columns by name (search results and the admin app build many envelopes).
    data = dict(zip(_COLUMNS, row)) if len(row) == len(_COLUMNS) else {c: row[c] for c in _COLUMNS}
    data["conflicts_with"] = _json_list(data["conflicts_with"])
    data["tags"] = _json_list(data["tags"])
    return Record(**data)


def _json_list(value) -> list:
    return [] if value == "[]" else loads(value, [])


_LINK_COLUMNS = ("SELECT re.record_id, re.entity_id, re.role, e.canonical_name, e.kind, e.scope_kind, e.scope_id "
                 "FROM record_entities re JOIN entities e ON e.id = re.entity_id ")
_LINK_ORDER = " ORDER BY re.role DESC, e.canonical_name"


def load_entity_links(conn: sqlite3.Connection, records: list[Record]) -> None:
    """Fill ``entity_links`` for the given records in one query."""
    if not records:
        return
    placeholders = ",".join("?" * len(records))
    rows = conn.execute(f"{_LINK_COLUMNS}WHERE re.record_id IN ({placeholders}){_LINK_ORDER}",
                        [r.id for r in records]).fetchall()
    attach_links(records, rows)


def attach_links(records: list[Record], rows) -> None:
    """Add link ``rows`` (as :func:`record_statements` reads them) to the records they name."""
    by_id = {r.id: r for r in records}
    for row in rows:
        record = by_id.get(row["record_id"])
        if record is None:  # a record that matched the links' subquery but not the records' read (written between)
            continue
        record.entity_links.append(
            {
                "entity_id": row["entity_id"],
                "role": row["role"],
                "name": row["canonical_name"],
                "kind": row["kind"],
                "scope": f"{row['scope_kind']}:{row['scope_id']}",
            }
        )


def record_statements(where: str, params: Any = ()) -> list[tuple[str, Any]]:
    """The two reads of :func:`fetch_records` as statements that can travel together: the records
    matching ``where``, and the entity links of the records matching it (a subquery, so the second
    needs nothing from the first's answer). ``where`` must not hold a LIMIT (the two reads could
    then pick different rows)."""
    return [(f"SELECT {SELECT_COLUMNS} FROM records r WHERE {where}", params),
            (f"{_LINK_COLUMNS}WHERE re.record_id IN (SELECT r.id FROM records r WHERE {where}){_LINK_ORDER}", params)]


def record_by_id_statements(record_id: str) -> list[tuple[str, Any]]:
    """:func:`record_statements` for the one record with id ``record_id``."""
    return record_statements("r.id = ?", (record_id,))


def records_from(rows, link_rows) -> list[Record]:
    """Records built from :func:`record_statements`' two answers."""
    records = [record_from_row(row) for row in rows]
    attach_links(records, link_rows)
    return records


def restrict_links(records, readable_scopes) -> None:
    """Drop, in place, entity links to entities in scopes the caller may not read.

    Records link only to entities of their own scope (the write path's rule); this is the
    read-side guard for links made before that rule, so a principal never sees the name of an
    entity they could not look up themselves.
    """
    allowed = set(readable_scopes)
    for record in records:
        record.entity_links = [link for link in record.entity_links if link.get("scope") in allowed]


def fetch_records(conn: sqlite3.Connection, where: str, params: Any = (), *, links: bool = True) -> list[Record]:
    """The records matching ``where`` (SQL over ``records r``), with their entity links unless
    ``links`` is false. On PostgreSQL the records and their links are read in one round trip."""
    if links and batches(conn) and "LIMIT" not in where.upper():
        return records_from(*fetch_together(conn, record_statements(where, params)))
    rows = conn.execute(f"SELECT {SELECT_COLUMNS} FROM records r WHERE {where}", params).fetchall()
    records = [record_from_row(row) for row in rows]
    if links:
        load_entity_links(conn, records)
    return records


def fetch_record(conn: sqlite3.Connection, record_id: str) -> Record | None:
    found = fetch_records(conn, "r.id = ?", (record_id,))
    return found[0] if found else None


def insert_record(conn: sqlite3.Connection, record: Record, embedding: np.ndarray | None, *, queue: bool = False) -> int | None:
    """Insert ``record`` (its ``seq`` is assigned here and returned). With ``queue`` on PostgreSQL
    the insert is queued instead (``PgConnection.defer``: it travels with the next statement) and
    None is returned: :func:`fts_sync_new` then reads the seq with the record's full-text text."""
    data = record.to_dict()
    values = {c: data[c] for c in _COLUMNS if c != "seq"}
    values["conflicts_with"] = dumps(values["conflicts_with"])
    values["tags"] = dumps(values["tags"])
    values["embedding"] = vector_to_blob(embedding) if embedding is not None else None
    values["embed_dim"] = int(embedding.shape[0]) if embedding is not None else None
    if getattr(conn, "backend", "sqlite") == "postgresql":  # the pgvector copy dense search reads
        values["embedding_vec"] = vector_literal(embedding) if embedding is not None else None
    cols = ", ".join(values)
    marks = ", ".join("?" * len(values))
    sql = f"INSERT INTO records ({cols}) VALUES ({marks})"
    defer = getattr(conn, "defer", None) if queue else None
    if defer is not None:
        defer(sql, list(values.values()))
        record.seq = None
        return None
    cur = conn.execute(sql, list(values.values()))
    record.seq = int(cur.lastrowid)
    return record.seq


def update_record(conn: sqlite3.Connection, record_id: str, **fields: Any) -> None:
    """Update columns of one record; list values are stored as JSON."""
    if not fields:
        return
    sets, params = [], []
    for name, value in fields.items():
        if name not in _COLUMNS and name not in ("embedding", "embed_dim"):
            raise ValueError(f"unknown record column {name}")
        if isinstance(value, (list, dict)):
            value = dumps(value)
        sets.append(f"{name} = ?")
        params.append(value)
        if name == "embedding" and getattr(conn, "backend", "sqlite") == "postgresql":
            sets.append("embedding_vec = ?::vector")
            params.append(None if value is None else vector_literal(blob_to_vector(value)))
    params.append(record_id)
    sql = f"UPDATE records SET {', '.join(sets)} WHERE id = ?"
    defer = getattr(conn, "defer", None)  # PostgreSQL: nothing reads the answer; it travels with the next statement
    if defer is None:
        conn.execute(sql, params)
    else:
        defer(sql, params)


def vector_to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def blob_to_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def vector_literal(vector: np.ndarray) -> str:
    """A pgvector input string holding exactly the float32 values of ``vector``."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


# -- full-text index -------------------------------------------------------------------------


def fts_text_for(conn: sqlite3.Connection, record_seq: int) -> tuple[str, str, str] | None:
    """(content, subject text, alias text) for a record, as the FTS index should hold them."""
    row = conn.execute(
        "SELECT id, content, attribute, subject_entity_id, status, scope_kind, scope_id FROM records WHERE seq = ?", (record_seq,)
    ).fetchone()
    if row is None or row["status"] == "deleted":
        return None
    # Only names of entities in the record's own scope: a link made across scopes (before the
    # write path stopped making them) must not let a reader of the record match the words of an
    # entity they may not read.
    subject_words = []
    if row["subject_entity_id"]:
        name = conn.execute(
            "SELECT canonical_name FROM entities WHERE id = ? AND scope_kind = ? AND scope_id = ?",
            (row["subject_entity_id"], row["scope_kind"], row["scope_id"]),
        ).fetchone()
        if name:
            subject_words.append(name[0])
    if row["attribute"]:
        subject_words.append(row["attribute"].replace("_", " "))
    aliases = conn.execute(
        "SELECT DISTINCT a.alias FROM record_entities re JOIN entity_aliases a ON a.entity_id = re.entity_id "
        "JOIN entities e ON e.id = re.entity_id WHERE re.record_id = ? AND e.scope_kind = ? AND e.scope_id = ? ORDER BY a.alias",
        (row["id"], row["scope_kind"], row["scope_id"]),
    ).fetchall()
    content = row["content"]
    procedure = conn.execute("SELECT name, trigger FROM procedures WHERE record_id = ?", (row["id"],)).fetchone()
    if procedure is not None:  # procedures are found by words in their name and trigger (design section 3)
        content = f"{procedure['name']}. {procedure['trigger']}"
    return content, " ".join(subject_words), " ".join(a[0] for a in aliases)


def fts_sync(conn: sqlite3.Connection, record_seq: int) -> None:
    """Make the FTS row of ``record_seq`` match the record (or remove it for a deleted one)."""
    if getattr(conn, "backend", "sqlite") == "postgresql":  # a tsvector made from our own tokens
        from .pg.fulltext import replace_row, text_of

        replace_row(conn, record_seq, text_of(conn, record_seq))
        return
    conn.execute("DELETE FROM records_fts WHERE rowid = ?", (record_seq,))
    text = fts_text_for(conn, record_seq)
    if text is not None:
        conn.execute(
            "INSERT INTO records_fts (rowid, content, subject, aliases) VALUES (?, ?, ?, ?)",
            (record_seq, *text),
        )


def fts_sync_new(conn: sqlite3.Connection, record: Record) -> int:
    """:func:`fts_sync` for a record just inserted with ``insert_record(..., queue=True)`` (and its
    links and procedure, queued too): on PostgreSQL its full-text text and its seq are read by id in
    the one round trip that carries those queued inserts, and ``record.seq`` is set. Returns the seq."""
    if getattr(conn, "backend", "sqlite") == "postgresql":
        from .pg.fulltext import replace_row, seq_and_text_of

        seq, text = seq_and_text_of(conn, record.id)
        record.seq = seq
        replace_row(conn, seq, text)
        return seq
    assert record.seq is not None
    fts_sync(conn, record.seq)
    return record.seq
