"""Duplicates and contradictions: which existing records a write restates, replaces or disputes.

A write folds into (reinforces) an existing live record only when both state the same claim
(:func:`memory_core.policy.claims.compare_claims`: no differing value, same polarity, no replaced
wording) about the same subject, or both have no subject:

- same subject (``<entity>:<attribute>`` in the same scope): the most recent same-claim record
  whose cosine to the new content is at least ``write.same_subject_reinforce_threshold``;
- no subject: the nearest live records of the same type and scope at cosine at least
  ``write.duplicate_threshold`` that also have no subject.

Otherwise, same-subject records with a different claim are superseded when the new source rank
is equal or higher (the highest-rank, most recent one becomes the lineage parent) and are
conflicts otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..policy.claims import compare_claims
from ..policy.rules import SOURCE_RANK, may_supersede
from ..policy.scopes import Scope
from ..settings import WriteSettings
from ..store.records import LIVE_STATUSES, Record, fetch_records

NEIGHBOURS = 5  # near-duplicate candidates compared by claim before giving up


@dataclass
class Match:
    """The outcome of comparing one write with the live records it could touch."""

    reinforce: Record | None = None
    supersede: list[Record] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    compared: list[dict] = field(default_factory=list)  # every comparison made, for the write log

    def notes(self) -> list[str]:
        """One line per near-duplicate that was not folded because its claim differs."""
        return [
            f"not folded into {c['record_id']} (cosine {c['cosine']:.2f}): {'; '.join(c['differences'])}"
            for c in self.compared if not c["same"] and c["differences"]
        ]


def same_subject_records(conn, scope: Scope, subject: str | None) -> list[Record]:
    """Live records on ``subject`` in ``scope``, most recent first."""
    if subject is None:
        return []
    return fetch_records(
        conn,
        # The unary + keeps SQLite on the subject index (the scope index is far less selective).
        "r.subject = ? AND +r.scope_kind = ? AND +r.scope_id = ? AND r.status IN ('provisional','confirmed') "
        "ORDER BY r.created_at DESC, r.seq DESC",
        (subject, scope.kind, scope.id),
        links=False,
    )


def _compare(content: str, record: Record, cosine: float) -> dict:
    subject_words = set((record.attribute or "").split("_")) - {""}
    comparison = compare_claims(content, record.content, subject_words)
    return {"record_id": record.id, "cosine": round(float(cosine), 4), "same": comparison.same,
            "differences": comparison.differences, "added_terms": comparison.added_terms}


def find_same_claim(conn, index, *, content: str, record_type: str, scope: Scope, subject: str | None,
                    vector, settings: WriteSettings, live_on_subject: list[Record]) -> Match:
    """The existing record this write restates, if any (the duplicate search)."""
    match = Match()
    if subject is not None:
        if not live_on_subject:
            return match
        cosines = index.similarity(vector, [r.seq for r in live_on_subject])
        for record in live_on_subject:
            cosine = cosines.get(record.seq, 0.0)
            compared = _compare(content, record, cosine)
            match.compared.append(compared)
            if compared["same"] and cosine >= settings.same_subject_reinforce_threshold:
                match.reinforce = record
                return match
        return match
    mask = index.mask([scope.key], LIVE_STATUSES, [record_type])
    for seq, cosine in index.search(vector, NEIGHBOURS, mask):
        if cosine < settings.duplicate_threshold:
            break
        found = fetch_records(conn, "r.seq = ?", (seq,), links=False)
        if not found or found[0].status not in LIVE_STATUSES or found[0].subject is not None:
            continue  # a record with a subject never absorbs a subject-less write
        compared = _compare(content, found[0], cosine)
        match.compared.append(compared)
        if compared["same"]:
            match.reinforce = found[0]
            return match
    return match


def classify_contradictions(match: Match, live_on_subject: list[Record], source_kind: str) -> Match:
    """Split the same-subject records (none of which states the same claim) into superseded and
    conflicting, by source rank (the contradiction check)."""
    replaced = [old for old in live_on_subject if may_supersede(source_kind, old.source_kind)]
    replaced.sort(key=lambda old: SOURCE_RANK[old.source_kind], reverse=True)  # stable: recency kept within a rank
    match.supersede = replaced
    match.conflicts = [old.id for old in live_on_subject if not may_supersede(source_kind, old.source_kind)]
    return match
