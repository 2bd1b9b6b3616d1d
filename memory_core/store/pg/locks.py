"""Which advisory locks a PostgreSQL write transaction takes, and in what order.

A write transaction names what it decides on (``PgStore.transaction(scopes=...)``):

- ``None``: the whole store. ``STORE`` exclusive: it waits for every other write transaction and
  every other waits for it (migrations of data, grants, extraction runs, maintenance, restore).
- a set of owner scopes (``"user:alice"``): ``STORE`` shared (whole-store transactions stay out),
  then one exclusive lock per scope. Writers of different scopes share nothing and run side by side.
- ``()``: ``STORE`` shared only (an append nobody checks: a log row).

The pseudo-scope :data:`ERASURE` is added by every forget: forgets redact rows of the shared logs
(search and write logs, events), so two of them must not interleave.

Every transaction takes ``STORE`` first, then its scope locks in increasing key order, all before
its first read, in one pipelined round trip (BEGIN and the locks travel together). A wait-for cycle
would need a transaction waiting for a key smaller than one it holds; none does, so these locks
never deadlock. The argument for why this is enough is in docs/store.md ("Concurrent writers on
PostgreSQL").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

STORE = 7_301_002  # bigint key: the whole store (exclusive) or "some scope" (shared)
SCOPE_SPACE = 7_301_003  # first half of a scope lock's (int4, int4) key; the second is the scope's hash
ERASURE = "~erasure"  # not a valid scope key (scope ids never hold "~"), so it names no real scope


def scope_key(scope: str) -> int:
    """A stable signed 32-bit key for ``scope`` (the same in every process and on every host).
    Two scopes sharing a key only make their writers queue for each other, never less safe."""
    return int.from_bytes(hashlib.blake2b(scope.encode("utf-8", "surrogatepass"), digest_size=4).digest(), "big",
                          signed=True)


def lock_statements(scopes: Iterable[str] | None) -> list[tuple[str, tuple]]:
    """The statements that take a transaction's locks, in the fixed order (each runs to completion
    before the next: the order is the statements' order, not an evaluation order within one)."""
    if scopes is None:
        return [("SELECT pg_advisory_xact_lock(%s)", (STORE,))]
    statements = [("SELECT pg_advisory_xact_lock_shared(%s)", (STORE,))]
    for key in sorted({scope_key(s) for s in scopes}):
        statements.append(("SELECT pg_advisory_xact_lock(%s, %s)", (SCOPE_SPACE, key)))
    return statements


def held_by(scopes: Iterable[str] | None) -> frozenset[str] | None:
    """What a transaction opened with ``scopes`` holds (None: the whole store)."""
    return None if scopes is None else frozenset(scopes)


def covers(held: frozenset[str] | None, wanted: Iterable[str] | None) -> bool:
    """Whether locks ``held`` cover a transaction that wants ``wanted``."""
    if held is None:
        return True
    if wanted is None:
        return False
    return set(wanted) <= held


# The change feed, written at commit: the version row is locked by the UPDATE and released by the
# COMMIT sent with it, so writers of different scopes never wait for each other's whole transaction
# on it, only for a commit already under way. Versions are given in commit order without gaps.
FLUSH_CHANGES = (
    "WITH v AS (INSERT INTO store_meta AS m (key, value) VALUES ('records_version', %(n)s::text) "
    "ON CONFLICT (key) DO UPDATE SET value = (m.value::bigint + %(n)s)::text RETURNING value::bigint AS top) "
    "INSERT INTO index_changes (version, record_seq, op) "
    "SELECT v.top - %(n)s + c.i, c.seq, c.op FROM v, unnest(%(seqs)s::bigint[], %(ops)s::text[]) WITH ORDINALITY AS c(seq, op, i)"
)
