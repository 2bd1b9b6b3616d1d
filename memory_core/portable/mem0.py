"""``agent-memory import --from mem0``: memories exported from mem0, as provisional records for review.

Two shapes are read (docs/export-format.md, "From mem0"): what mem0's ``Memory.get_all`` returns
(``{"results": [...]}`` or, from older versions, a bare list), each item with ``id``, ``memory``,
``hash``, ``created_at``, ``updated_at``, the promoted ids (``user_id``, ``agent_id``, ``run_id``,
``actor_id``, ``role``) and ``metadata``; and an export holding ``{"memories": [...]}`` whose items
carry the text as ``memory`` or ``content`` (with optional ``categories`` and ``state``).

mem0 keeps no evidence, so every memory is an ``agent_inference``: provisional, in the named
user's scope, waiting in the review queue. Its id, hash, times, categories and metadata are kept
as ``mem0:`` tags; a memory of another user than the named one is refused, not moved.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, MemoryCoreError
from ..ingest.write_types import WriteRequest
from ..policy.grants import ScopeAccess
from ..policy.scopes import Scope, validate_id
from .format import MAX_FILE_BYTES
from .reading import check_size

MAX_TAG_CHARS = 200
SKIPPED_STATES = ("deleted", "archived")  # an export may keep memories mem0 no longer serves


def _items(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return data[key]
    raise InvalidInputError("not a mem0 file: expected get_all's {\"results\": [...]} (or a list) or an export's {\"memories\": [...]}",
                            field="file")


def _tag(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    tag = f"mem0:{name}={text}"
    return tag if len(tag) <= MAX_TAG_CHARS else tag[:MAX_TAG_CHARS - 1] + "\u2026"


def _request(item: Any, user_id: str, agent_id: str, actor: str) -> WriteRequest:
    if not isinstance(item, dict):
        raise InvalidInputError("a memory must be an object", field="memory")
    text = item.get("memory", item.get("content"))
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError("a memory needs its text in 'memory' (or 'content')", field="memory")
    owner = item.get("user_id")
    if owner is not None and owner != user_id:
        raise InvalidInputError(f"this memory belongs to mem0 user {str(owner)[:60]!r}, not {user_id!r}; import each user's file "
                                "into that user's scope", field="user_id")
    tags = ["mem0"]
    for name in ("id", "hash", "created_at", "updated_at", "agent_id", "run_id", "actor_id", "role", "state", "expiration_date"):
        if item.get(name) is not None:
            tags.append(_tag(name, item[name]))
    for category in item.get("categories") or []:
        tags.append(_tag("category", category))
    metadata = item.get("metadata")
    if isinstance(metadata, dict):
        tags.extend(_tag(f"metadata.{key}", value) for key, value in sorted(metadata.items(), key=lambda kv: str(kv[0])))
    elif metadata is not None:
        tags.append(_tag("metadata", metadata))
    return WriteRequest(type="semantic", content=text.strip(), scope=Scope("user", user_id), source_kind="agent_inference",
                        agent_id=agent_id, user_id=user_id, actor=actor, tags=tags, source_ref=f"mem0:{item.get('id')}"[:200],
                        operation="import_mem0")


def import_mem0(service, path: str | Path, *, user_id: str | None, agent_id: str | None = None, dry_run: bool = False,
                actor: str = "import", max_bytes: int = MAX_FILE_BYTES, batch_size: int = 500,
                progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Import mem0 memories into ``user:<user_id>``; one report entry per memory (``line`` is its position, from 1).

    Without ``agent_id`` the operator writes; with it, that agent's write grants apply."""
    if not user_id:
        raise InvalidInputError("--user names the user whose scope mem0's memories land in", field="user")
    validate_id(user_id, "user_id")
    check_size(path, max_bytes)
    try:
        data = json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path} is not UTF-8 (byte {exc.start})", field="file") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InvalidInputError(f"{path} is not JSON: {getattr(exc, 'msg', 'nested too deeply')}", field="file") from None
    items = _items(data)
    scope = Scope("user", user_id)
    if agent_id:
        access = service.access(agent_id, user_id)
    else:
        access = ScopeAccess("import", actor, writable={scope.key: f"operator import by {actor}"}, readable={scope.key: "operator import"})
    report: list[dict[str, Any] | None] = []
    requests, positions = [], []
    for number, item in enumerate(items, 1):
        if isinstance(item, dict) and item.get("state") in SKIPPED_STATES:
            report.append({"line": number, "file_id": item.get("id"), "action": "skip", "summary": f"state {item['state']} in mem0"})
            continue
        try:
            requests.append(_request(item, user_id, agent_id or "import", actor))
            positions.append(len(report))
            report.append(None)
        except MemoryCoreError as exc:
            report.append({"line": number, "file_id": item.get("id") if isinstance(item, dict) else None, "action": "refuse",
                           "error": exc.to_dict()})
    results = service.write_many(requests, access, batch_size=batch_size, dry_run=dry_run, progress=progress)
    for position, result in zip(positions, results):
        item = items[position] if isinstance(items[position], dict) else {}
        entry = {"line": position + 1, "file_id": item.get("id")}
        if result.ok:
            outcome = result.outcome
            entry.update(action="reinforce" if outcome.outcome == "reinforced" else ("supersede" if outcome.superseded else "create"),
                         record_id=outcome.record.id, summary=outcome.summary, status=outcome.record.status,
                         source_kind=outcome.record.source_kind)
        else:
            entry.update(action="refuse", error=result.error.to_dict())
        report[position] = entry
    counts: dict[str, int] = {}
    for entry in report:
        counts[entry["action"]] = counts.get(entry["action"], 0) + 1
    return {"file": str(path), "from": "mem0", "dry_run": dry_run, "counts": counts, "lines": report}
