"""When the vector file may stand in for reading every record, and when it is written again.

An open (``VectorIndex.rebuild``) first asks :meth:`VectorFileKeeper.load`. The file is used only
when all of these hold, checked before its 1.5 GB (at a million records) are read:

* its header is whole and names this embedder (model, version, dimension) and format;
* the change feed since the file's ``records_version`` holds no ``reset`` (restore, re-embed) and no
  ``delete`` (a forgotten record's vector may be in it), the store has reached that version, and
  the feed still reaches back to it;
* its *anchor* matches: the change at the file's version names the same record (seq and random id)
  in this store, so a file copied from another store, or from a copy of this store that went on
  differently, is refused;
* fewer than half its rows changed since (otherwise a plain load is as cheap);

then, after reading: the body's CRC-32 matches, and a sample of rows not changed since agrees with
the store's rows byte for byte (vector, scope, status, type). Anything else: the file is removed
(damaged, from elsewhere, or holding a forgotten vector) or ignored (another embedder), and the
index is loaded from the store as before. A usable file is brought up to date with the change feed
before the open returns, so the first search is as right as after a full load.

The file is written on a thread of its own from the in-memory state (no store reads): after a load
from the store, after a forget removed it, and when the feed has moved ``max(1000, rows / 10)``
changes past it; never while a write transaction is open or while the index is ahead of the store
(it may hold rows of a transaction that will roll back). After writing, the feed is read again
through a connection of its own: a forget committed meanwhile removes the new file at once (the
forgetting process removes whatever file it sees; one of the two always sees the other).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..store.records import RECORD_TYPES, STATUSES, blob_to_vector
from ..store import vector_queries
from .ann_file import store_changes
from .vector_file import VectorFile, VectorFileError

log = logging.getLogger(__name__)

REWRITE_AFTER = 1000  # changes past the file (or a tenth of its rows, whichever is more) before it is written again
SAMPLE_ROWS = 16


class VectorFileKeeper:
    """Loads a ``VectorIndex`` from its vector file and keeps the file written (module docstring).

    ``index`` is the :class:`~.vector_index.VectorIndex` that owns this keeper (not imported here:
    the index imports this module)."""

    def __init__(self, index: Any, file: VectorFile, store_path: Path, *, min_records: int, use: bool = True,
                 write: bool = True) -> None:
        self.index = index
        self.file = file
        self.store_path = store_path
        self.min_records = min_records
        self.use = use
        self.write = write  # off for a read-only open: read a usable file, write and remove nothing
        self.file_version: int | None = None  # the version of the file this process read or wrote
        self.wanted = False  # a write is due but could not start yet
        self.last_load: dict = {}  # how the last open went (benchmarks and tests read it)
        self._writer: threading.Thread | None = None
        self._guard = threading.Lock()

    # -- loading -----------------------------------------------------------------------------

    def load(self) -> bool:
        """Fill the (freshly reset) index from the file; True if it was used. Caller holds both locks."""
        began = time.perf_counter()
        try:
            header = self.file.read_header()
        except VectorFileError as exc:
            return self._refuse(f"damaged: {exc}", warn=True)
        except OSError as exc:
            self.last_load = {"used": False, "why": f"unreadable: {exc}"}
            return False
        if header is None:
            self.last_load = {"used": False, "why": self.file.last_event.get("stale", "no file")}
            return False
        rows, version = int(header["rows"]), int(header["records_version"])
        why, changed = self._stale(header, rows, version)
        if why:
            return self._refuse(why)
        try:
            loaded = self.file.map_body(header)
        except (VectorFileError, OSError) as exc:
            return self._refuse(f"damaged: {exc}", warn=True)
        read_s = time.perf_counter() - began
        try:
            self.index.install(loaded, list(header["scopes"]), version)
        except (ValueError, TypeError, IndexError) as exc:
            return self._refuse(f"damaged: {exc}", warn=True)
        why = self._disagrees(loaded, header, changed)
        if why:
            return self._refuse(why)
        self.file_version = version
        self.last_load = {"used": True, "rows": rows, "records_version": version, "read_s": round(read_s, 3),
                          "changes_since": int(self.index.store.records_version() - version)}
        return True

    def _stale(self, header: dict, rows: int, version: int) -> tuple[str | None, np.ndarray]:
        """Why the file cannot be used, judged before its body is read (or None), and the seqs changed since."""
        none = np.zeros(0, dtype=np.int64)
        if rows == 0:
            return "the file holds no rows", none
        if list(header.get("statuses") or []) != list(STATUSES) or list(header.get("types") or []) != list(RECORD_TYPES):
            return "written with other status or type codes", none
        changes = store_changes(self.index.store)(version)
        if changes.stale:
            return changes.stale, none
        if changes.deleted.size:
            return "records were forgotten since it was written", none
        if changes.upserted.size > rows // 2:
            return f"{changes.upserted.size} of its {rows} rows changed since: a plain load is as cheap", none
        anchor = header.get("anchor") or {}
        store = self.index.store
        if anchor.get("version") != version:
            return "its anchor names another version: damaged", none
        here = vector_queries.feed_anchor(store, version)
        if here != (anchor.get("seq"), anchor.get("id")):
            return "its anchor record is not this store's: written for another store (or a copy that went on differently)", none
        last = anchor.get("last_seq") or 0
        found = vector_queries.record_id_at(store, last)
        if found is None or found != anchor.get("last_id"):
            return "its newest record is not this store's: written for another store", none
        # Every record added after the file went through the feed (so it is in the delta); a store
        # that got records some other way, or another store's file, is caught here.
        newer = vector_queries.count_newer(store, last)
        if newer != int(np.count_nonzero(changes.upserted > last)):
            return f"{newer} records newer than the file are not all in the change feed: written for another store", none
        return None, changes.upserted

    def _disagrees(self, loaded, header: dict, changed: np.ndarray) -> str | None:
        """A sample of rows the feed says are unchanged must equal the store's rows, byte for byte."""
        index = self.index
        unchanged = np.flatnonzero(~np.isin(loaded.seqs, changed))
        if unchanged.size == 0:
            return None
        picks = unchanged[np.unique(np.linspace(0, unchanged.size - 1, min(SAMPLE_ROWS, unchanged.size)).astype(np.int64))]
        seqs = [int(loaded.seqs[p]) for p in picks]
        rows = vector_queries.sample_rows(index.store, seqs)
        scopes, statuses, types = header["scopes"], header["statuses"], header["types"]
        vectors = index.vectors(seqs)
        for position, seq, vector in zip(picks, seqs, vectors):
            row = rows.get(seq)
            if row is None or row["embedding"] is None or row["status"] == "deleted":
                return f"record seq {seq} is not live in this store: written for another store"
            stored = blob_to_vector(row["embedding"])
            if (stored.shape[0] != index.dim or not np.array_equal(stored, vector)
                    or scopes[loaded.scope[position]] != f"{row['scope_kind']}:{row['scope_id']}"
                    or statuses[loaded.status[position]] != row["status"] or types[loaded.type[position]] != row["type"]):
                return f"record seq {seq} differs from this store's row: written for another store, or garbled"
        return None

    def _refuse(self, why: str, warn: bool = False) -> bool:
        (log.warning if warn else log.info)("vector file %s not used (%s); loading from the store", self.file.path, why)
        if self.write:
            self.file.discard(why)
        self.last_load = {"used": False, "why": why}
        self.index._reset()
        return False

    def loaded_from_store(self, count: int) -> None:
        """The index was loaded row by row: the file (if any) is behind it, so write one."""
        self.file_version = None
        self.wanted = self.use and count >= self.min_records

    # -- writing -----------------------------------------------------------------------------

    def forgotten(self, seqs: list[int], why: str) -> None:
        """Records were forgotten (or the store reset): erase the file now, write a new one later."""
        if self.write:
            self.file.erase(seqs, why)
        self.file_version = None
        self.wanted = self.use

    def after_changes(self) -> None:
        """Start a write when one is due (see the module docstring); cheap when none is."""
        if not (self.use and self.write):
            return
        index = self.index
        count = index.count()
        if count < self.min_records:
            self.wanted = False
            return
        behind = None if self.file_version is None else index.version - self.file_version
        if not (self.wanted or behind is None or behind >= max(REWRITE_AFTER, count // 10)):
            return
        with self._guard:
            if self._writer is not None and self._writer.is_alive():
                self.wanted = True
                return
            snap = self._snapshot()
            if snap is None:
                self.wanted = True
                return
            self.wanted = False
            self.file_version = snap.version  # no second write for the same changes while this one runs
            # Not a daemon: an exiting process finishes the file (seconds at a million rows).
            self._writer = threading.Thread(target=self._write, args=(snap,), name="vector-file", daemon=False)
            self._writer.start()

    def _snapshot(self):
        index, store = self.index, self.index.store
        with store.lock, index._lock:
            if store.conn.in_transaction or index.version != store.records_version():
                return None  # rows of an open transaction, or behind the feed: not a state to keep
            seq, record_id = vector_queries.feed_anchor(store, index.version)
            last_seq, last_id = vector_queries.newest_record(store)
            anchor = {"version": index.version, "seq": seq, "id": record_id, "last_seq": last_seq, "last_id": last_id}
            return index.snapshot(anchor)

    def write_now(self, progress=None) -> dict:
        """Write the file at once on this thread (benchmarks, tests, an operator's tool); returns
        what happened. Refused (``{"written": False}``) in the states the background writer skips."""
        if not self.write:
            return {"written": False, "why": "the store is open read-only"}
        self.wait()  # one writer at a time in a process: let a background write finish first
        with self._guard:
            snap = self._snapshot()
            if snap is None:
                return {"written": False, "why": "a write transaction is open or the index is behind the store"}
            self.file_version = snap.version
        self._write(snap, progress)
        return {"written": self.file_version is not None, **self.file.last_event}

    def _write(self, snap, progress=None) -> None:
        began = time.perf_counter()
        try:
            self.file.save(snap, progress)
        except OSError as exc:  # a read-only directory or a full disk: the index in memory is unaffected
            log.warning("could not write the vector file %s: %s", self.file.path, exc)
            self.file_version = None
            return
        why = _forgotten_since(self.store_path, snap.version)
        if why:
            self.file.discard(why)
            self.file_version = None
            self.wanted = True
            return
        self.file.last_event["write_s"] = round(time.perf_counter() - began, 2)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a write in progress has finished; True if none is running any more."""
        writer = self._writer
        if writer is not None:
            writer.join(timeout)
            return not writer.is_alive()
        return True


def _forgotten_since(store_path: Path, version: int) -> str | None:
    """Why a file written at ``version`` must go (a forget or reset committed since), read through a
    read-only connection of its own (the service may have closed its own meanwhile), or None."""
    try:
        deleted, reset = vector_queries.feed_flags_in_file(store_path, version)
    except sqlite3.Error as exc:
        return f"the change feed could not be read after writing ({exc})"
    if deleted:
        return "a record was forgotten while the file was being written"
    if reset:
        return "the store was reset while the file was being written"
    return None
