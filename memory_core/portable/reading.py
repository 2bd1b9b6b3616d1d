"""Reading an import file whole before anything is written: size, lines, header, counts.

Any problem here refuses the whole file (nothing is written): a file over the size limit is
refused from its size alone, before a byte is read; a broken line, an unknown format version or
a file cut short (no ``end`` line, or counts that differ from it) names the line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from .format import MAX_FILE_BYTES, MAX_LINE_BYTES, check_header, parse_line


@dataclass
class ExportFile:
    """The parsed lines of an export file: its header, record lines and session lines (with line numbers)."""

    header: dict[str, Any]
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    sessions: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


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


def read_export(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> ExportFile:
    """Parse and check a whole export file (docs/export-format.md)."""
    parsed: ExportFile | None = None
    end: dict[str, Any] | None = None
    for number, raw in raw_lines(path, max_bytes):
        obj = parse_line(raw, number)
        if parsed is None:
            check_header(obj)
            parsed = ExportFile(header=obj)
            continue
        if end is not None:
            raise InvalidInputError(f"line {number} follows the end line", field=f"line {number}")
        kind = obj["kind"]
        if kind == "record" and isinstance(obj.get("record"), dict):
            parsed.records.append((number, obj))
        elif kind == "session" and isinstance(obj.get("session"), dict):
            parsed.sessions.append((number, obj))
        elif kind == "end":
            end = obj
        else:
            raise InvalidInputError(f"line {number} is a {kind!r} line out of place or without its object", field=f"line {number}")
    if parsed is None:
        raise InvalidInputError(f"{path} is empty", field="file")
    if end is None:
        raise InvalidInputError(f"{path} has no end line: the file was cut short; nothing was imported", field="file")
    if end.get("records") != len(parsed.records) or end.get("sessions") != len(parsed.sessions):
        raise InvalidInputError(f"the end line counts {end.get('records')} records and {end.get('sessions')} sessions but the file "
                                f"holds {len(parsed.records)} and {len(parsed.sessions)}", field="file")
    return parsed
