"""The approximate index kept in a file next to the store, so an open does not train it again.

Training and filling the IVF index takes about a minute at a million rows; reading it back takes
about a second. The file (``<store>.ivf``) holds one faiss index, the row-to-record map it was
built with (``seqs``) and a header naming what it belongs to:

* the embedder's model name, version and dimension, and the index kind: any difference means the
  vectors are not comparable, so the file is stale;
* ``records_version``, the store's change-feed version the rows were read at (or earlier). What
  changed since is read back from ``index_changes``: new and updated records are added to the
  loaded index, records that left are removed from it. A ``reset`` (restore, re-embed) since then,
  a version the store has not reached (an older backup restored under the file) or a feed that no
  longer reaches back that far make the file stale;
* a CRC-32 of everything after the header. A file that fails it, or that faiss cannot read, is
  corrupt: it is ignored with a warning and replaced by the next build.

A forgotten record's vector must not outlive it on disk, so a ``delete`` in the change feed makes
the file stale too, and :meth:`AnnFile.discard` is called by the process that forgets (through
``VectorIndex.refresh``) to remove the file at once; the next open builds a new one. Writes are
atomic (a temporary file in the same directory, flushed and renamed over the old one), so a reader
sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import logging
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..store import vector_queries
from .side_file import remove, write_atomically

log = logging.getLogger(__name__)

MAGIC = b"AGENT-MEMORY-IVF\n"
FORMAT = 1
_CHUNK = 64 << 20  # CRC and write in 64 MB pieces (the index is ~400 MB at a million rows)


class AnnFileError(Exception):
    """The file exists but cannot be used as it is (corrupt); the reason is the message."""


@dataclass
class LoadedIndex:
    """What a valid file holds: the faiss index, its rows' record seqs, and the header."""

    index: Any
    seqs: np.ndarray
    header: dict[str, Any]


@dataclass
class Changes:
    """What the change feed says happened after the file's version: seqs added or updated, seqs
    deleted, and whether the file must be rebuilt anyway (with why)."""

    upserted: np.ndarray
    deleted: np.ndarray
    stale: str | None = None


class AnnFile:
    """Reads and writes the persisted IVF index of one store (see the module docstring)."""

    def __init__(self, path: str | Path, identity: dict[str, Any], changes_since: Callable[[int], Changes]) -> None:
        self.path = Path(path)
        self.identity = dict(identity)
        self.changes_since = changes_since
        self.last_event: dict[str, Any] = {}  # what the last load/save did (benchmarks and tests read it)

    # -- writing ---------------------------------------------------------------------------------

    def save(self, index, seqs: np.ndarray, version: int) -> None:
        """Write ``index`` (faiss ids = rows) with ``seqs`` (row -> record seq) as read at ``version``."""
        import faiss

        body = faiss.serialize_index(index)
        seqs = np.ascontiguousarray(seqs, dtype=np.int64)
        crc = zlib.crc32(memoryview(seqs).cast("B"))
        for start in range(0, body.size, _CHUNK):
            crc = zlib.crc32(memoryview(body[start:start + _CHUNK]), crc)
        header = {**self.identity, "format": FORMAT, "records_version": int(version), "rows": int(seqs.size),
                  "index_bytes": int(body.size), "crc32": crc}
        head = json.dumps(header, sort_keys=True).encode()

        def body_writer(out) -> None:
            out.write(MAGIC + struct.pack("<Q", len(head)) + head)
            out.write(memoryview(seqs).cast("B"))
            for start in range(0, body.size, _CHUNK):
                out.write(memoryview(body[start:start + _CHUNK]))

        write_atomically(self.path, body_writer)
        # A record forgotten after ``version`` may be in what was just written; the forgetting
        # process removes the file after its commit, and this check covers a forget that
        # committed before the rename (one of the two always sees the other).
        try:
            forgotten = self.changes_since(version).deleted.size
        except Exception as exc:  # noqa: BLE001 - the store closed meanwhile: cannot vouch for the file
            forgotten, why = 1, f"the change feed could not be read after writing ({exc})"
        else:
            why = "a record was forgotten while the index was being written"
        if forgotten:
            self.discard(why)
            return
        self.last_event = {"saved": True, "rows": int(seqs.size), "bytes": self.path.stat().st_size}

    def discard(self, why: str) -> None:
        """Remove the file (stale, corrupt, or holding a forgotten record's vector)."""
        remove(self.path, why)
        self.last_event = {"discarded": why}

    # -- reading ---------------------------------------------------------------------------------

    def load(self) -> LoadedIndex | None:
        """The index in the file, or None if there is none or it belongs to another embedder.

        Raises :class:`AnnFileError` for a file that is damaged (bad magic, header, size or CRC,
        or faiss refuses it).
        """
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8:
            raise AnnFileError("not an approximate index file (bad magic)")
        (head_len,) = struct.unpack_from("<Q", data, len(MAGIC))
        start = len(MAGIC) + 8
        try:
            header = json.loads(data[start:start + head_len])
            rows, index_bytes, crc = int(header["rows"]), int(header["index_bytes"]), int(header["crc32"])
        except (ValueError, KeyError, TypeError) as exc:
            raise AnnFileError(f"unreadable header: {exc}") from exc
        start += head_len
        if len(data) != start + 8 * rows + index_bytes:
            raise AnnFileError(f"file is {len(data)} bytes, the header describes {start + 8 * rows + index_bytes}")
        view = memoryview(data)
        if zlib.crc32(view[start:]) != crc:
            raise AnnFileError("checksum mismatch")
        mismatch = {k: (header.get(k), v) for k, v in self.identity.items() if header.get(k) != v}
        if header.get("format") != FORMAT:
            mismatch["format"] = (header.get("format"), FORMAT)
        if mismatch:
            self.last_event = {"stale": f"built for another embedder or format: {mismatch}"}
            return None
        import faiss

        seqs = np.frombuffer(data, dtype=np.int64, count=rows, offset=start).copy()
        try:
            index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8, offset=start + 8 * rows))
        except RuntimeError as exc:
            raise AnnFileError(f"faiss cannot read the index: {exc}") from exc
        return LoadedIndex(index, seqs, header)


def store_changes(store) -> Callable[[int], Changes]:
    """``changes_since(version)`` over ``store``'s change feed (``index_changes``)."""

    def changes_since(version: int) -> Changes:
        current, oldest, rows = vector_queries.feed_since(store, version)
        if version > current:
            return Changes(np.zeros(0, np.int64), np.zeros(0, np.int64), f"file at version {version}, store at {current}")
        if rows and oldest is not None and oldest > version + 1:
            return Changes(np.zeros(0, np.int64), np.zeros(0, np.int64), "the change feed no longer reaches the file's version")
        if any(r["reset"] for r in rows):
            return Changes(np.zeros(0, np.int64), np.zeros(0, np.int64), "the store was reset (restore or re-embed) since")
        deleted = np.array([r["record_seq"] for r in rows if r["deleted"]], dtype=np.int64)
        upserted = np.array([r["record_seq"] for r in rows if not r["deleted"]], dtype=np.int64)
        return Changes(upserted, deleted)

    return changes_since
