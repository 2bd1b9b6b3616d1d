"""The vector snapshot kept next to the store (``<store>.vectors``), so an open need not read every record.

Opening a store rebuilds the in-memory index from every record's embedding blob: at a million
records that is 1.5 GB read row by row through Python, 10-26 s here. This file holds the same
index state as one process had it at one change-feed version, laid out so it can be read back in
one pass: the vectors as a float32 matrix plus the small per-row arrays the hard filter uses.

Layout (little-endian)::

    MAGIC, zero-padded to 4096 bytes
    matrix   float32[capacity, dim]   rows [0, rows) hold the vectors; the rest is a hole (no disk
                                      blocks) the process appends into
    seqs     int64[rows]      record seq of each row
    scope    int32[rows]      code into the header's ``scopes`` list
    status   int8[rows]       code into the header's ``statuses`` list
    type     int8[rows]       code into the header's ``types`` list
    event    float64[rows]    event (else creation) time as a Unix time, NaN when none
    header   JSON             identity, records_version, anchor, rows, capacity, CRC-32 of the rows
    uint64   header length
    uint32   CRC-32 of the header
    END

The header comes last so the body can be written in one streaming pass with its CRC computed on
the way; a file cut short loses its trailer and is recognised as damaged at once.

**Mapped, copy on write.** The matrix is not read into memory: the file is mapped privately
(``MAP_PRIVATE``), so the vectors are the page cache's own pages, shared by every process that
opened the store, and a process that changes a row (a write, a forget) gets its own copy of that
page while the file stays as it was. Checking the CRC reads every page once, which is what an open
then costs: one pass over 1.5 GB at a million records instead of a million rows through Python. The
price of a mapping: if someone *truncates* the file in place while a process has it mapped, that
process is killed (SIGBUS) on its next access to the lost pages. This code never does that (files
are replaced by renaming a new one into place, which leaves existing mappings intact, and removed
by unlinking, likewise); only :meth:`VectorFile.erase` writes into a file in place, and what it
writes (zeros over a forgotten record's row) is a change a mapping may see, never a shorter file.
Do not edit or truncate the file by hand while a process has the store open; delete it instead.

This module only reads and writes the format. When a file may be used, how it is brought up to
date and when it is written again is :mod:`.warm_start`.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable

import numpy as np

from .side_file import remove, write_atomically

log = logging.getLogger(__name__)

MAGIC = b"AGENT-MEMORY-VECTORS\n"
MATRIX_AT = 4096  # the matrix starts on a page boundary, so its mapping is aligned
END = b"\nEND-VECTORS\n"
FORMAT = 1
_TRAILER = struct.Struct("<QI")
_CHUNK_ROWS = 16384  # rows per write or read (24 MB at 384 dimensions)
_SMALL = (("seqs", np.int64), ("scope", np.int32), ("status", np.int8), ("type", np.int8), ("event", np.float64))


class VectorFileError(Exception):
    """The file exists but is damaged (cut short, garbled, or not this format); the reason is the message."""


@dataclass
class Snapshot:
    """One index state to write: ``rows`` are positions in ``matrix`` (whose rows may change later:
    any row changed after ``version`` is re-read from the change feed when the file is loaded)."""

    version: int
    anchor: dict[str, Any]
    scopes: list[str]
    statuses: list[str]
    types: list[str]
    seqs: np.ndarray
    scope: np.ndarray
    status: np.ndarray
    type: np.ndarray
    event: np.ndarray
    matrix: np.ndarray
    rows: np.ndarray


@dataclass
class Loaded:
    """What :meth:`VectorFile.map_body` gives: the mapped matrix (``capacity`` rows, the first
    ``seqs.size`` of them live) and the small arrays, read into memory."""

    matrix: np.ndarray
    seqs: np.ndarray
    scope: np.ndarray
    status: np.ndarray
    type: np.ndarray
    event: np.ndarray


def capacity_for(rows: int) -> int:
    """The matrix rows a file of ``rows`` vectors reserves: the power of two row-by-row upserts
    would have grown the in-memory matrix to (at least 1,024)."""
    return max(1024, 1 << max(rows - 1, 0).bit_length())


class VectorFile:
    """Reads and writes one store's vector snapshot (see the module docstring)."""

    def __init__(self, path: str | Path, identity: dict[str, Any], *, chunk_rows: int = _CHUNK_ROWS) -> None:
        self.path = Path(path)
        self.identity = dict(identity)  # model, model_version, dim: any difference makes the file stale
        self.chunk_rows = chunk_rows  # rows per write (and per progress call)
        self.last_event: dict[str, Any] = {}  # what the last load, save or removal did (benchmarks and tests read it)

    # -- writing -------------------------------------------------------------------------------

    def save(self, snap: Snapshot, progress: Callable[[int, int], None] | None = None) -> int:
        """Write ``snap`` atomically; returns the file's size. ``progress(rows_done, rows)`` is
        called after each chunk of the matrix."""
        dim = int(self.identity["dim"])
        rows = int(snap.rows.size)
        capacity = capacity_for(rows)

        def body(out: BinaryIO) -> None:
            crc = 0
            out.write(MAGIC + bytes(MATRIX_AT - len(MAGIC)))
            for start in range(0, rows, self.chunk_rows):
                block = np.ascontiguousarray(snap.matrix[snap.rows[start:start + self.chunk_rows]], dtype=np.float32)
                if block.shape[1:] != (dim,):
                    raise ValueError(f"vectors of {block.shape[1:]} dimensions, the file is for {dim}")
                data = memoryview(block).cast("B")
                crc = zlib.crc32(data, crc)
                out.write(data)
                if progress:
                    progress(min(rows, start + self.chunk_rows), rows)
            out.seek(MATRIX_AT + capacity * dim * 4)  # the free rows: a hole, no disk blocks
            for name, dtype in _SMALL:
                data = memoryview(np.ascontiguousarray(getattr(snap, name), dtype=dtype)).cast("B")
                crc = zlib.crc32(data, crc)
                out.write(data)
            header = {**self.identity, "format": FORMAT, "records_version": int(snap.version), "anchor": snap.anchor,
                      "rows": rows, "capacity": capacity, "scopes": snap.scopes, "statuses": snap.statuses, "types": snap.types,
                      "crc32": crc}
            head = json.dumps(header, sort_keys=True).encode()
            out.write(head + _TRAILER.pack(len(head), zlib.crc32(head)) + END)

        write_atomically(self.path, body)
        size = self.path.stat().st_size
        self.last_event = {"saved": True, "rows": rows, "bytes": size, "records_version": int(snap.version)}
        return size

    # -- reading -------------------------------------------------------------------------------

    def read_header(self) -> dict[str, Any] | None:
        """The header, or None when there is no file or it belongs to another embedder or format.

        Raises :class:`VectorFileError` for a damaged file (bad magic or trailer, a header that
        fails its CRC or does not parse, or a size the header does not describe).
        """
        try:
            with open(self.path, "rb") as f:
                header = _header(f, os.fstat(f.fileno()).st_size)
        except FileNotFoundError:
            return None
        mismatch = {k: (header.get(k), v) for k, v in self.identity.items() if header.get(k) != v}
        if header.get("format") != FORMAT:
            mismatch["format"] = (header.get("format"), FORMAT)
        if mismatch:
            self.last_event = {"stale": f"written for another embedder or format: {mismatch}"}
            return None
        return header

    def map_body(self, header: dict[str, Any]) -> Loaded:
        """Map the matrix (privately, copy on write) and read the small arrays; raises
        :class:`VectorFileError` if the file changed since its header was read or fails its CRC."""
        rows, capacity, dim = int(header["rows"]), int(header["capacity"]), int(self.identity["dim"])
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if _header(f, size) != header:
                raise VectorFileError("the file was replaced while it was being opened")
            mapping = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        matrix = np.frombuffer(mapping, dtype=np.float32, count=capacity * dim, offset=MATRIX_AT).reshape(capacity, dim)
        crc = zlib.crc32(memoryview(matrix[:rows]).cast("B"))  # reads every page of the vectors once
        at = MATRIX_AT + capacity * dim * 4
        small = {}
        for name, dtype in _SMALL:
            array = np.frombuffer(mapping, dtype=dtype, count=rows, offset=at).copy()
            crc = zlib.crc32(memoryview(array).cast("B"), crc)
            small[name] = array
            at += array.nbytes
        if crc != int(header["crc32"]):
            raise VectorFileError("checksum mismatch")
        return Loaded(matrix, **small)

    # -- removing ------------------------------------------------------------------------------

    def discard(self, why: str) -> None:
        """Remove the file (stale or damaged)."""
        if remove(self.path, why):
            self.last_event = {"discarded": why}

    def erase(self, seqs, why: str) -> None:
        """Zero the rows of ``seqs`` (forgotten records) in the file's bytes, then remove it.

        Unlinking alone would leave the vectors in the disk blocks the file occupied (and, for a
        process that still maps it, in the file); overwriting the rows first means a forgotten
        record's vector is gone from them too. A file that cannot be read is simply removed.
        """
        wanted = np.asarray(sorted(set(int(s) for s in seqs)), dtype=np.int64)
        try:
            with open(self.path, "r+b") as f:
                header = _header(f, os.fstat(f.fileno()).st_size)
                rows, capacity, dim = int(header["rows"]), int(header["capacity"]), int(self.identity["dim"])
                f.seek(MATRIX_AT + capacity * dim * 4)
                stored = np.frombuffer(f.read(8 * rows), dtype=np.int64)
                zeros = bytes(4 * dim)
                for row in np.flatnonzero(np.isin(stored, wanted)):
                    f.seek(MATRIX_AT + int(row) * 4 * dim)
                    f.write(zeros)
                f.flush()
                os.fsync(f.fileno())
        except FileNotFoundError:
            return
        except (VectorFileError, OSError, ValueError, KeyError) as exc:
            log.info("vector file %s not overwritten before removal (%s)", self.path, exc)
        self.discard(why)


def _header(f: BinaryIO, size: int) -> dict[str, Any]:
    """Parse and check the trailer and header of an open file of ``size`` bytes."""
    tail = len(END) + _TRAILER.size
    if size < MATRIX_AT + tail:
        raise VectorFileError(f"only {size} bytes: cut short")
    f.seek(0)
    if f.read(len(MAGIC)) != MAGIC:
        raise VectorFileError("not a vector file (bad magic)")
    f.seek(size - tail)
    trailer = f.read(tail)
    if trailer[_TRAILER.size:] != END:
        raise VectorFileError("no end marker: cut short or overwritten")
    head_len, head_crc = _TRAILER.unpack(trailer[:_TRAILER.size])
    if head_len > size - MATRIX_AT - tail:
        raise VectorFileError("header length beyond the file")
    f.seek(size - tail - head_len)
    head = f.read(head_len)
    if zlib.crc32(head) != head_crc:
        raise VectorFileError("header checksum mismatch")
    try:
        header = json.loads(head)
        rows, capacity, dim = int(header["rows"]), int(header["capacity"]), int(header["dim"])
        int(header["crc32"]), int(header["records_version"])
    except (ValueError, KeyError, TypeError) as exc:
        raise VectorFileError(f"unreadable header: {exc}") from exc
    if not 0 <= rows <= capacity or dim <= 0:
        raise VectorFileError(f"impossible sizes: {rows} rows, capacity {capacity}, {dim} dimensions")
    expected = MATRIX_AT + capacity * dim * 4 + rows * sum(np.dtype(t).itemsize for _, t in _SMALL) + head_len + tail
    if size != expected:
        raise VectorFileError(f"file is {size} bytes, its header describes {expected}")
    return header
