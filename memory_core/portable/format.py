"""The export format, version 1: JSON Lines, one object per line (docs/export-format.md).

A file is a ``header`` line, then ``record`` lines (one per lineage: its latest version, its
earlier versions and the entities they use), optional ``session`` lines, and an ``end`` line
with the counts, so a cut file is recognised. Text is written as UTF-8 JSON and read back
exactly; the store's input rules apply on import (a lone surrogate is refused there).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidInputError
from ..store.records import Record

FORMAT = "agent-memory-export"
FORMAT_VERSION = 1
MAX_FILE_BYTES = 1 << 30  # an import file larger than this is refused before it is read
MAX_LINE_BYTES = 16 << 20  # and a line longer than this is refused as broken

ENVELOPE = ("id", "type", "version", "lineage_id", "content", "subject_entity_id", "attribute", "subject", "scope", "source_kind",
            "source_ref", "creator_agent_id", "evidence", "evidence_session_id", "evidence_turn", "created_at", "updated_at",
            "event_at", "expires_at", "valid_from", "valid_until", "review_at", "review_flagged_at", "review_reason",
            "confidence", "status", "observations", "last_observed_session", "supersedes_id", "superseded_by_id",
            "conflicts_with", "tags")
LINE_KINDS = ("header", "record", "session", "end")


def envelope(record: Record, procedure: dict | None) -> dict[str, Any]:
    """A record's full envelope as the file holds it (no embedding: the importing store embeds)."""
    data = record.to_dict()
    out = {name: data[name] for name in ENVELOPE}
    out["entity_links"] = [{"entity_id": link["entity_id"], "role": link["role"]} for link in record.entity_links]
    out["procedure"] = procedure
    return out


def dump_line(obj: dict[str, Any]) -> str:
    """One line of the file. Text the store holds is valid Unicode; an older row that is not is
    written with ``\\u`` escapes (still valid JSON) and refused by the importing store's rules."""
    try:
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return line + "\n"


def parse_line(raw: bytes, number: int) -> dict[str, Any]:
    """A line's object, or InvalidInputError naming the line and what is wrong with it."""
    if len(raw) > MAX_LINE_BYTES:
        raise InvalidInputError(f"line {number} is longer than {MAX_LINE_BYTES} bytes", field=f"line {number}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"line {number} is not UTF-8 (byte {exc.start})", field=f"line {number}") from None
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InvalidInputError(f"line {number} is not JSON: {getattr(exc, 'msg', 'nested too deeply')}", field=f"line {number}") from None
    if not isinstance(obj, dict) or obj.get("kind") not in LINE_KINDS:
        raise InvalidInputError(f"line {number} is not a header, record, session or end object", field=f"line {number}")
    return obj


def check_header(obj: dict[str, Any]) -> None:
    """Refuse a file that is not ours or is of a format version this code does not read."""
    if obj.get("kind") != "header" or obj.get("format") != FORMAT:
        raise InvalidInputError(f"the first line is not an {FORMAT} header; is this an export file?", field="line 1")
    if obj.get("format_version") != FORMAT_VERSION:
        raise InvalidInputError(f"format_version {obj.get('format_version')!r} is not one this version reads (it reads {FORMAT_VERSION})",
                                field="format_version")


_INTS = ("version", "observations", "evidence_turn")
_LISTS = ("conflicts_with", "tags")
_REQUIRED = ("id", "type", "version", "lineage_id", "content", "scope", "source_kind", "created_at", "updated_at", "confidence", "status")


def check_envelope(env: Any, where: str) -> None:
    """Refuse an envelope with unknown or missing fields, wrong types or text the store refuses."""
    from ..inputs import check_texts
    from ..store.records import RECORD_TYPES, STATUSES

    if not isinstance(env, dict):
        raise InvalidInputError(f"{where} is not an object", field=where)
    unknown = sorted(set(env) - set(ENVELOPE) - {"entity_links", "procedure"})
    missing = [name for name in _REQUIRED if env.get(name) is None]
    if unknown or missing:
        raise InvalidInputError(f"{where}: unknown fields {unknown} / missing fields {missing}", field=where)
    for name, value in env.items():
        if name in _INTS and value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidInputError(f"{where}: {name} must be an integer", field=name)
        elif name in _LISTS and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise InvalidInputError(f"{where}: {name} must be a list of strings", field=name)
        elif name == "confidence" and (not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1):
            raise InvalidInputError(f"{where}: confidence must be a number from 0 to 1", field=name)
        elif name not in (*_INTS, *_LISTS, "confidence", "entity_links", "procedure") and value is not None and not isinstance(value, str):
            raise InvalidInputError(f"{where}: {name} must be a string", field=name)
    if env["type"] not in RECORD_TYPES or env["status"] not in STATUSES or env["status"] == "deleted":
        raise InvalidInputError(f"{where}: type {env['type']!r} / status {env['status']!r} cannot be imported", field="status")
    links = env.get("entity_links") or []
    if not isinstance(links, list) or not all(isinstance(link, dict) and link.get("role") in ("subject", "mention") for link in links):
        raise InvalidInputError(f"{where}: entity_links must be a list of {{entity_id, role}}", field="entity_links")
    if env.get("procedure") is not None and not isinstance(env["procedure"], dict):
        raise InvalidInputError(f"{where}: procedure must be an object or null", field="procedure")
    check_texts(env, where)
