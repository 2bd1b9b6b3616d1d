"""``agent-memory import``: an export file back into a store, through ``write_many``.

Every record line is one write with every rule of a write: the scope must be writable (an
operator import may write any scope the file names; an import as a principal only what its
grants allow), duplicates of existing records are reinforced by the claim rules, a newer claim
supersedes or conflicts by source rank, and entities are resolved by name in the record's scope.
The file's id (when free), times, status, confidence and earlier versions are kept. The source
kind is never raised: a principal's import re-checks evidence like any write and cannot bring
``system`` or ``session_summary`` records (they arrive as ``agent_inference``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..clock import parse_ts
from ..errors import InvalidInputError, MemoryCoreError
from ..ingest.entity_resolution import ENTITY_KINDS, add_alias, create_entity, find_by_alias
from ..ingest.procedures import render
from ..ingest.write_types import ImportedFields, WriteRequest
from ..policy.grants import ScopeAccess
from ..policy.rules import SOURCE_RANK
from ..policy.scopes import Scope, parse_scope
from ..store import portable_queries as q
from ..store.db import dumps
from ..store.records import LIVE_STATUSES
from .format import MAX_FILE_BYTES, check_envelope
from .reading import record_lines, scan_export

PRINCIPAL_KINDS = ("user_statement", "tool_result", "agent_inference")  # what a principal's own writes may claim


def capped(source_kind: str, ceiling: str | None) -> str:
    """``source_kind``, lowered to ``ceiling`` when that ranks lower: never raised."""
    if ceiling is not None and SOURCE_RANK[ceiling] < SOURCE_RANK[source_kind]:
        return ceiling
    return source_kind


def _ts(env: dict, name: str):
    value = env.get(name)
    if value is None:
        return None
    try:
        return parse_ts(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} is not an ISO-8601 time: {str(value)[:60]!r}", field=name) from None


def _text_of(env: dict) -> tuple[str, dict | None]:
    """The content to write and the procedure: a procedural record's stored content is its
    description rendered with the procedure, so the description is taken back when it matches."""
    content, procedure = env["content"], env.get("procedure")
    if procedure:
        description = content.split("\nProcedure: ", 1)[0]
        if render(description, procedure) == content:
            return description, procedure
    return content, None


def _history_row(env: dict, source_kind: str, links) -> dict[str, Any]:
    scope = parse_scope(env["scope"])
    row = {name: env[name] for name in env if name not in ("scope", "entity_links", "procedure")}
    row.update(scope_kind=scope.kind, scope_id=scope.id, source_kind=source_kind, _links=links, _procedure=env.get("procedure"))
    row["conflicts_with"], row["tags"] = list(env.get("conflicts_with") or []), list(env.get("tags") or [])
    return row


class _Line:
    """One record line made into a write request, with the hook that creates its entities and sessions."""

    def __init__(self, number: int, obj: dict, *, principal: tuple[str, str] | None, actor: str, sessions: dict[str, dict],
                 created: set[str]):
        self.number = number
        env = obj["record"]
        check_envelope(env, f"line {number} record")
        for n, version in enumerate(obj.get("versions") or []):
            check_envelope(version, f"line {number} version {n + 1}")
            if version["status"] in LIVE_STATUSES or version["scope"] != env["scope"]:
                raise InvalidInputError(f"line {number}: an earlier version must be superseded or expired, in the record's scope",
                                        field="versions")
            for name in ("created_at", "updated_at", "event_at", "expires_at", "valid_from", "valid_until"):
                _ts(version, name)
        if not isinstance(obj.get("versions") or [], list) or not isinstance(obj.get("entities") or [], list):
            raise InvalidInputError(f"line {number}: versions and entities must be lists", field="versions")
        for entity in obj.get("entities") or []:
            check_entity(entity, number)
        self.file_id = env.get("id")
        scope = parse_scope(env["scope"])
        self.scope = scope
        entities = {e["id"]: e for e in obj.get("entities") or [] if isinstance(e, dict) and e.get("scope") == scope.key}
        self.entities = entities
        self.sessions = sessions if principal is None else {}
        ceiling = None if principal is None else "agent_inference"
        kind = env["source_kind"]
        if kind not in SOURCE_RANK:
            raise InvalidInputError(f"unknown source_kind {kind!r}", field="source_kind")
        if principal is not None and kind not in PRINCIPAL_KINDS:
            kind = capped(kind, ceiling)  # system and session summaries are the host's to write
        links = [link for link in env.get("entity_links") or [] if link.get("entity_id") in entities]
        subject = next((entities[link["entity_id"]] for link in links if link.get("role") == "subject"), None)
        mentions = [entities[link["entity_id"]]["name"] for link in links if link.get("role") == "mention"]
        content, procedure = _text_of(env)
        fields = {name: env[name] for name in env if name not in ("content", "entity_links", "procedure", "scope", "source_kind")}
        if principal is not None:  # the write path decides what a principal's write is worth
            for name in ("confidence", "observations", "expires_at", "review_flagged_at", "review_reason", "evidence_session_id",
                         "evidence_turn", "last_observed_session"):
                fields.pop(name, None)
            if fields.get("status") in LIVE_STATUSES:
                fields.pop("status")
        history = [_history_row(v, capped(v["source_kind"], ceiling if v["source_kind"] not in PRINCIPAL_KINDS or principal is None else None), None)
                   for v in obj.get("versions") or []]
        self.history_links = [[(link["entity_id"], link["role"]) for link in v.get("entity_links") or [] if link.get("entity_id") in entities]
                              for v in obj.get("versions") or []]
        agent_id, user_id = principal or (env.get("creator_agent_id") or "import", scope.id if scope.kind == "user" else "import")
        self.request = WriteRequest(
            type=env["type"], content=content, scope=scope, source_kind=kind, agent_id=agent_id, user_id=user_id, actor=actor,
            attribute=env.get("attribute"), about=subject["name"] if subject else None,
            about_kind=subject["kind"] if subject and subject.get("kind") in ENTITY_KINDS else "other", mentions=mentions,
            evidence=env.get("evidence"), session_id=env.get("evidence_session_id"), tags=list(env.get("tags") or []),
            event_at=_ts(env, "event_at"), valid_from=_ts(env, "valid_from"), valid_until=_ts(env, "valid_until"),
            review_at=_ts(env, "review_at"), source_ref=env.get("source_ref"), operation="import",
            evidence_verified=principal is None, evidence_turn=env.get("evidence_turn") if principal is None else None,
            dedupe=env.get("status") in LIVE_STATUSES, procedure=procedure,
            imported=ImportedFields(fields=fields, history=history, prepare=self.prepare, created=created),
        )
        for name in ("created_at", "updated_at"):
            _ts(env, name)

    def prepare(self, conn, ctx) -> None:
        """In the record's savepoint: its sessions, its entities (the file's id when free), and ids already taken."""
        actor = self.request.actor
        cited = {version.get(name) for version in [self.request.imported.fields, *self.request.imported.history]
                 for name in ("evidence_session_id", "last_observed_session", "source_ref")}
        for session_id in sorted(cited - {None}):
            if session_id in self.sessions and not q.existing_ids(conn, "sessions", [session_id]):
                q.insert_session_as_is(conn, self.sessions[session_id], dumps)
        mapping = {}
        for entity_id, entity in self.entities.items():
            found = find_by_alias(conn, entity["name"], [self.scope.key])
            if found:
                mapping[entity_id] = found[0]["id"]
            elif not q.existing_ids(conn, "entities", [entity_id]):
                q.insert_entity_as_is(conn, entity, self.scope.kind, self.scope.id, actor)
                mapping[entity_id] = entity_id
            else:
                mapping[entity_id] = create_entity(conn, name=entity["name"], kind=entity["kind"], scope=self.scope,
                                                   now=entity["created_at"], actor=actor)
            for alias in [entity["name"], *entity.get("aliases", [])]:
                add_alias(conn, mapping[entity_id], alias)
        imported = self.request.imported
        if self.file_id and q.existing_ids(conn, "records", [self.file_id]):
            imported.fields.pop("id", None)
            if imported.fields.get("lineage_id") == self.file_id:
                imported.fields.pop("lineage_id")
        taken = q.existing_ids(conn, "records", [v["id"] for v in imported.history])
        kept = []
        for version, links in zip(imported.history, self.history_links):
            if version["id"] not in taken:
                version["_links"] = [(mapping[e], role) for e, role in links if e in mapping]
                kept.append(version)
        imported.history[:] = kept


def check_entity(entity: Any, number: int) -> None:
    """Refuse an entity object that is not one the format describes."""
    from ..inputs import check_texts

    ok = (isinstance(entity, dict) and all(isinstance(entity.get(k), str) and entity.get(k) for k in ("id", "kind", "name", "scope", "status", "created_at"))
          and entity["kind"] in ENTITY_KINDS and isinstance(entity.get("aliases", []), list)
          and all(isinstance(a, str) for a in entity.get("aliases", [])))
    if not ok:
        raise InvalidInputError(f"line {number}: an entity needs id, kind (one of {', '.join(ENTITY_KINDS)}), name, scope, status, "
                                "created_at and a list of aliases", field="entities")
    check_texts(entity, f"line {number} entity")
    _ts(entity, "created_at")


def check_session(session: dict, number: int) -> None:
    """Refuse (the whole file) a session object that the store would not take as it is."""
    from ..inputs import check_texts

    turns = session.get("turns")
    ok = (all(isinstance(session.get(k), str) and session.get(k) for k in ("id", "agent_id", "user_id", "started_at"))
          and isinstance(turns, list) and session.get("trigger_mode") in (None, "tool_only", "auto", "hybrid")
          and all(isinstance(t, dict) and isinstance(t.get("turn"), int) and t.get("role") in ("user", "assistant", "tool", "system")
                  and isinstance(t.get("content"), str) and isinstance(t.get("at"), str) for t in turns)
          and len({t["turn"] for t in turns}) == len(turns))
    if not ok:
        raise InvalidInputError(f"line {number}: a session needs id, agent_id, user_id, started_at and turns, each with a "
                                "distinct turn number, a role, content and at", field=f"line {number}")
    check_texts(session, f"line {number} session")


def _action(result) -> str:
    if not result.ok:
        return "refuse"
    outcome = result.outcome
    if outcome.outcome == "reinforced":
        return "reinforce"
    return "supersede" if outcome.superseded else "create"


def import_file(service, path: str | Path, *, agent_id: str | None = None, user_id: str | None = None, dry_run: bool = False,
                actor: str = "import", max_bytes: int = MAX_FILE_BYTES, batch_size: int = 500,
                progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Import an export file; returns ``{"lines": [...], "counts": {...}, "dry_run": ...}`` with one
    entry per record line (line number, file id, action, record id, summary or error).

    The file is checked whole first, streaming (:func:`.reading.scan_export`: a refusal there
    writes nothing); its record lines are then read again and imported ``batch_size`` at a time,
    so memory holds one batch, not the file. ``progress(done, total)`` counts record lines.
    """
    if (agent_id is None) != (user_id is None):
        raise InvalidInputError("an import as a principal needs both agent_id and user_id", field="agent_id")
    scan = scan_export(path, max_bytes)
    principal = (agent_id, user_id) if agent_id else None
    for number, obj in scan.sessions:
        check_session(obj["session"], number)
    sessions = {obj["session"]["id"]: obj["session"] for _, obj in scan.sessions}
    access = service.access(agent_id, user_id) if principal is not None else None
    created: set[str] = set()  # what this run created: compared with the store's records, not with each other
    report: list[dict[str, Any]] = []
    batch: list[tuple[int, dict]] = []
    for number, obj in record_lines(path, scan, max_bytes):
        batch.append((number, obj))
        if len(batch) >= max(1, batch_size):
            report.extend(_import_batch(service, batch, principal, access, actor, sessions, created, dry_run,
                                        len(report), scan.records, progress))
            batch = []
    if batch:
        report.extend(_import_batch(service, batch, principal, access, actor, sessions, created, dry_run,
                                    len(report), scan.records, progress))
    counts: dict[str, int] = {}
    for item in report:
        counts[item["action"]] = counts.get(item["action"], 0) + 1
    return {"file": str(path), "dry_run": dry_run, "counts": counts, "lines": report}


def _import_batch(service, batch, principal, access, actor: str, sessions: dict, created: set[str], dry_run: bool,
                  before: int, total: int, progress) -> list[dict[str, Any]]:
    """One batch of record lines made into writes and written with ``write_many`` (one embedding
    call and one transaction); returns their report entries, in file order."""
    report: list[dict[str, Any] | None] = []
    lines: list[_Line] = []
    for number, obj in batch:
        try:
            lines.append(_Line(number, obj, principal=principal, actor=actor, sessions=sessions, created=created))
            report.append(None)
        except MemoryCoreError as exc:
            report.append({"line": number, "file_id": obj["record"].get("id"), "action": "refuse", "error": exc.to_dict()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            error = InvalidInputError(f"line {number} is not a record envelope ({type(exc).__name__}: {str(exc)[:80]})", field=f"line {number}")
            report.append({"line": number, "file_id": None, "action": "refuse", "error": error.to_dict()})
    if access is None:  # an operator import may write every scope the batch names
        keys = sorted({line.scope.key for line in lines})
        access = ScopeAccess("import", actor, writable={k: f"operator import by {actor}" for k in keys},
                             readable={k: "operator import" for k in keys})
    step = None if progress is None else (lambda done, _of: progress(before + done, total))
    results = service.write_many([line.request for line in lines], access, batch_size=len(lines) or 1, dry_run=dry_run,
                                 progress=step) if lines else []
    done = iter(zip(lines, results))
    for position, entry in enumerate(report):
        if entry is not None:
            continue
        line, result = next(done)
        item = {"line": line.number, "file_id": line.file_id, "action": _action(result)}
        if result.ok:
            item.update(record_id=result.outcome.record.id, summary=result.outcome.summary,
                        source_kind=result.outcome.record.source_kind, status=result.outcome.record.status)
        else:
            item["error"] = result.error.to_dict()
        report[position] = item
    if progress is not None and len(lines) < len(batch):
        progress(before + len(batch), total)
    return report  # type: ignore[return-value]
