"""Named reads of the evaluation harness (``memory_core/eval``): what a scenario step wrote and
searched, what a principal's scopes hold, and the event times a replay needs.

The harness looks at the store only through these (and the service), so ``eval/`` holds no SQL.
"""

from __future__ import annotations

from typing import Any

from .db import Store


def log_marks(store: Store) -> tuple[int, int, int]:
    """The newest write-log seq, the newest search-log seq and the record count (0 when empty)."""
    return (int(store.scalar("SELECT COALESCE(MAX(seq), 0) FROM write_log") or 0),
            int(store.scalar("SELECT COALESCE(MAX(seq), 0) FROM search_log") or 0),
            record_count(store))


def record_count(store: Store) -> int:
    """Records of any status."""
    return int(store.scalar("SELECT COUNT(*) FROM records") or 0)


def writes_after(store: Store, seq: int) -> list[dict[str, Any]]:
    """Write-log rows after ``seq``, oldest first."""
    return [dict(r) for r in store.query("SELECT * FROM write_log WHERE seq > ? ORDER BY seq", (seq,))]


def searches_after(store: Store, seq: int) -> list:
    """Search-log rows after ``seq``, oldest first."""
    return store.query("SELECT * FROM search_log WHERE seq > ? ORDER BY seq", (seq,))


def entities_named(store: Store, alias_norm: str) -> int:
    """Unmerged entities with the normalised alias ``alias_norm``."""
    return int(store.scalar(
        "SELECT COUNT(DISTINCT e.id) FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
        "WHERE a.alias_norm = ? AND e.status != 'merged'", (alias_norm,)) or 0)


def contents_in_scopes(store: Store, scopes: list[str]) -> list[str]:
    """The content of every record in the given scope keys (``kind:id``), whatever its status."""
    keys = [tuple(s.split(":", 1)) for s in scopes]
    if not keys:
        return []
    clause = " OR ".join("(scope_kind = ? AND scope_id = ?)" for _ in keys)
    return [r["content"] for r in store.query(f"SELECT content FROM records WHERE {clause}", [v for key in keys for v in key])]


def event_times(store: Store, record_ids: list[str]) -> tuple[dict[str, str], dict[str, int]]:
    """Each listed record's event time (its creation time when it has none) and its seq."""
    event_at: dict[str, str] = {}
    seq_of: dict[str, int] = {}
    ids = sorted(record_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in store.query(f"SELECT id, COALESCE(event_at, created_at), seq FROM records WHERE id IN ({','.join('?' * len(chunk))})",
                               chunk):
            event_at[row[0]] = row[1]
            seq_of[row[0]] = row[2]
    return event_at, seq_of


def search_user(store: Store, search_id: str) -> str | None:
    """The user a logged search was made for."""
    return store.scalar("SELECT user_id FROM search_log WHERE id = ?", (search_id,))
