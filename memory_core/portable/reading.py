"""Reading an import file in two streaming passes: check it all, then hand out its record lines.

Any problem found by the check refuses the whole file before anything is written: a file over the
size limit is refused from its size alone, before a byte is read; a broken line, an unknown
format version or a file cut short (no ``end`` line, or counts that differ from it) names the
line. The check keeps only the header, the counts and the session lines (records cite them, and
they come last); the record lines are read again, one at a time, while they are imported, so an
import holds one batch of records in memory, not the file. A file changed between the passes is
refused (nothing has been written by then).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .format import MAX_FILE_BYTES, MAX_LINE_BYTES, check_header, parse_line


@dataclass
class ExportScan:
    """What the checking pass keeps of an export file: its header, how many record lines it has,
    its session lines (with line numbers) and the file's identity when it was read."""

    header: dict[str, Any]
    records: int = 0
    sessions: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    identity: tuple[int, int, int] = (0, 0, 0)  # (inode, size, mtime_ns)


def _identity(path: str | Path) -> tuple[int, int, int]:
    info = os.stat(path)
    return info.st_ino, info.st_size, info.st_mtime_ns


def check_size(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> int:
    """The file's size, or InvalidInputError if it is larger than ``max_bytes`` (nothing is read)."""
    size = os.stat(path).st_size
    if size > max_bytes:
        raise InvalidInputError(f"{path} is {size} bytes; the import limit is {max_bytes} bytes (nothing was read)", field="file")
    return size


def raw_lines(path: str | Path, max_bytes: int = MAX_FILE_BYTES):
    """(number, bytes) of each non-empty line, refusing long lines and a file that grew past the limit."""
    check_size(path, max_bytes)
    read = 0
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            read += len(raw)
            if read > max_bytes:
                raise InvalidInputError(f"{path} grew past the import limit of {max_bytes} bytes while it was read", field="file")
            if len(raw) > MAX_LINE_BYTES:
                raise InvalidInputError(f"line {number} is longer than {MAX_LINE_BYTES} bytes", field=f"line {number}")
            if raw.strip():
                yield number, raw.rstrip(b"\r\n")


def scan_export(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> ExportScan:
    """Check a whole export file (docs/export-format.md) line by line, keeping no record line."""
    identity = _identity(path)
    scan: ExportScan | None = None
    end: dict[str, Any] | None = None
    for number, raw in raw_lines(path, max_bytes):
        obj = parse_line(raw, number)
        if scan is None:
            check_header(obj)
            scan = ExportScan(header=obj, identity=identity)
            continue
        if end is not None:
            raise InvalidInputError(f"line {number} follows the end line", field=f"line {number}")
        kind = obj["kind"]
        if kind == "record" and isinstance(obj.get("record"), dict):
            scan.records += 1
        elif kind == "session" and isinstance(obj.get("session"), dict):
            scan.sessions.append((number, obj))
        elif kind == "end":
            end = obj
        else:
            raise InvalidInputError(f"line {number} is a {kind!r} line out of place or without its object", field=f"line {number}")
    if scan is None:
        raise InvalidInputError(f"{path} is empty", field="file")
    if end is None:
        raise InvalidInputError(f"{path} has no end line: the file was cut short; nothing was imported", field="file")
    if end.get("records") != scan.records or end.get("sessions") != len(scan.sessions):
        raise InvalidInputError(f"the end line counts {end.get('records')} records and {end.get('sessions')} sessions but the file "
                                f"holds {scan.records} and {len(scan.sessions)}", field="file")
    if _identity(path) != identity:
        raise InvalidInputError(f"{path} changed while it was checked; nothing was imported", field="file")
    return scan


def record_lines(path: str | Path, scan: ExportScan, max_bytes: int = MAX_FILE_BYTES):
    """(number, object) of each record line of a file :func:`scan_export` checked, read again one
    at a time; refused before the first line if the file changed since the check."""
    if _identity(path) != scan.identity:
        raise InvalidInputError(f"{path} changed after it was checked; nothing was imported", field="file")
    for number, raw in raw_lines(path, max_bytes):
        obj = parse_line(raw, number)
        if obj.get("kind") == "record" and isinstance(obj.get("record"), dict):
            yield number, obj
