"""What a reviewer is shown besides the candidate: surrounding turns and related live records.

Related records come from the retrieval pipeline through a :class:`SearchFunction` the runner
is given (so the reviewer sees what an agent would), plus every live record on the same subject (same entity and
attribute) in the target scope, found directly in the store because a contradiction must never
depend on a relevance gate.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from ..ingest.entity_resolution import find_principal_entity
from ..policy.rules import normalise_attribute
from ..text import normalise_alias
from ..policy.scopes import Scope
from ..store.db import Store
from ..store.write_queries import entity_in_scope_by_alias, live_records_on_subject
from .candidates import Candidate, Transcript

log = logging.getLogger(__name__)


def _subject_entity(conn, candidate: Candidate, scope: Scope, user_id: str) -> str | None:
    if candidate.about:
        return entity_in_scope_by_alias(conn, normalise_alias(candidate.about), scope.kind, scope.id)
    if scope.kind == "user" and scope.id == user_id:
        return find_principal_entity(conn, user_id)
    return None


def _view(record, same_subject: bool) -> dict:
    return {
        "id": record.id, "content": record.content, "type": record.type, "status": record.status,
        "source_kind": record.source_kind, "created_at": record.created_at, "subject": record.subject,
        "same_subject": same_subject,
    }


class SearchFunction(Protocol):
    """A memory search as a principal (``MemoryService.search``); returns an object with ``results``,
    each holding the ``record`` it found."""

    def __call__(self, *, agent_id: str, user_id: str, query: str, limit: int, session_id: str | None,
                 origin: str | None) -> Any: ...


def related_records(store: Store, search: SearchFunction | None, transcript: Transcript, candidate: Candidate,
                    scope: Scope | None, limit: int) -> list[dict]:
    """Live records a reviewer should weigh against ``candidate`` (same subject first)."""
    found: dict[str, dict] = {}
    attribute = normalise_attribute(candidate.attribute)
    if scope is not None and attribute and candidate.type != "episodic":
        with store.lock:
            entity = _subject_entity(store.conn, candidate, scope, transcript.user_id)
            if entity:
                for record in live_records_on_subject(store.conn, f"{entity}:{attribute}", scope.kind, scope.id, limit):
                    found[record.id] = _view(record, True)
    if search is not None and len(found) < limit:
        try:
            response = search(agent_id=transcript.agent_id, user_id=transcript.user_id, query=candidate.content,
                              limit=limit, session_id=transcript.session_id, origin="extraction")
            for result in response.results:
                if result.record is not None and result.record.id not in found:
                    found[result.record.id] = _view(result.record, False)
        except Exception as exc:  # related records are context, never a reason to fail a run
            log.warning("related-record search failed: %s", exc)
    return list(found.values())[:limit]
