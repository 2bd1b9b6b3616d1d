"""``agent-memory export``: the records a principal (or an operator) may read, as an export file.

Reading goes through the principal's grants: a scope they cannot read is refused, not skipped,
and entity links to scopes they cannot read are dropped. Forgotten records are never exported
(their text is gone). Sessions are included on request: those the exported records cite, and
for a principal only the sessions of that agent with that user.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, PermissionDeniedError
from ..policy.scopes import parse_scope
from ..store import portable_queries as q
from ..store.records import restrict_links
from .format import FORMAT, FORMAT_VERSION, dump_line, envelope


def export_lines(service, *, scopes: list[str] | None = None, agent_id: str | None = None, user_id: str | None = None,
                 sessions: bool = False, progress: Callable[[int, int], None] | None = None):
    """Yield the lines of an export file (``str``, each ending in a newline)."""
    if (agent_id is None) != (user_id is None):
        raise InvalidInputError("an export as a principal needs both agent_id and user_id", field="agent_id")
    readable = service.access(agent_id, user_id).readable if agent_id else None
    wanted = [parse_scope(s).key for s in scopes] if scopes else None
    if readable is not None:
        refused = [s for s in (wanted or []) if s not in readable]
        if refused:
            raise PermissionDeniedError(f"agent {agent_id} may not read {', '.join(refused)}; nothing was exported", scope=refused[0])
        chosen = wanted or sorted(readable)
    else:
        chosen = wanted or q.scopes_with_records(service.store)
    records = q.exportable_records(service.store, chosen)
    if readable is not None:
        restrict_links(records, readable)
    procedures = q.procedures_of(service.store, [r.id for r in records if r.type == "procedural"])
    entities = q.entities_by_id(service.store, sorted({link["entity_id"] for r in records for link in r.entity_links}))
    lineages: dict[str, list] = {}
    for record in records:
        lineages.setdefault(record.lineage_id, []).append(record)
    # In the order the heads were written (time, then store order): an import replays the writes in it.
    ordered = sorted(lineages.values(), key=lambda versions: (max(versions, key=lambda r: r.version).created_at,
                                                               max(versions, key=lambda r: r.version).seq))
    yield dump_line({"kind": "header", "format": FORMAT, "format_version": FORMAT_VERSION, "exported_at": service._now(),
                     "exported_as": {"agent_id": agent_id, "user_id": user_id} if agent_id else "operator",
                     "scopes": chosen, "sessions_included": sessions})
    for done, versions in enumerate(ordered, 1):
        versions.sort(key=lambda r: (r.version, r.created_at))
        head = versions[-1]
        used = sorted({link["entity_id"] for r in versions for link in r.entity_links})
        yield dump_line({"kind": "record", "record": envelope(head, procedures.get(head.id)),
                         "versions": [envelope(r, procedures.get(r.id)) for r in versions[:-1]],
                         "entities": [entities[e] for e in used if e in entities]})
        if progress is not None:
            progress(done, len(ordered))
    written = 0
    if sessions:
        cited = sorted({s for r in records for s in (r.evidence_session_id, r.last_observed_session, r.source_ref) if s})
        for session in q.sessions_with_turns(service.store, cited):
            if agent_id and (session["agent_id"], session["user_id"]) != (agent_id, user_id):
                continue
            yield dump_line({"kind": "session", "session": session})
            written += 1
    yield dump_line({"kind": "end", "records": len(ordered), "sessions": written})


def export_to(service, out: str | Path, *, overwrite: bool = False, **options: Any) -> dict[str, Any]:
    """Write an export file at ``out`` (refused if it exists unless ``overwrite``); written to a
    temporary name and renamed, so a failed export leaves no half file. Returns the counts."""
    target = Path(out)
    if target.exists() and not overwrite:
        raise InvalidInputError(f"{target} exists; pass --force to replace it", field="out")
    partial = target.with_name(target.name + ".partial")
    lines = 0
    records = 0
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as handle:
            for line in export_lines(service, **options):
                handle.write(line)
                lines += 1
                records += line.startswith('{"kind":"record"')
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return {"path": str(target), "lines": lines, "records": records}
