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

Separately, two records **state the same fact** (:func:`states_same_fact`) when they are one
observation saved twice, say by the model's ``memory_write`` and again by session-end extraction
under another attribute: same owner scope, the same words (:func:`fact_text`), and the same
evidence (the same source session, and the same transcript turn unless one of them has none).
A write restating such a record of its own type reinforces it whatever its subject
(:func:`find_same_fact`), and a forget reaches every live record stating the same fact
(``ingest/erasure.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..policy.claims import compare_claims
from ..text import quote_fold as fold
from ..policy.rules import SOURCE_RANK, may_supersede
from ..policy.scopes import Scope
from ..settings import WriteSettings
from ..store.batching import batches
from ..store.records import LIVE_STATUSES, SELECT_COLUMNS, Record, record_from_row, vector_literal
from ..store.write_queries import (live_records_on_subject, live_rows_from_source, live_rows_from_source_later,
                                   live_subject_cosines_later, record_at_seq)

NEIGHBOURS = 5  # near-duplicate candidates compared by claim before giving up
_SENTENCE_END = " .!?;:\u2026"  # trailing punctuation that does not change what a sentence states


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


def same_subject_records(conn, scope: Scope, subject: str | None, vector=None) -> tuple[list[Record], dict[int, float] | None]:
    """Live records on ``subject`` in ``scope``, most recent first, and on PostgreSQL (given the
    write's ``vector``) their cosines with it, read in the same round trip (else None: the index
    computes them)."""
    if subject is None:
        return [], None
    cosines = None
    if vector is not None and batches(conn):
        cosines = live_subject_cosines_later(conn, vector_literal(vector), subject, scope.kind, scope.id)
    records = live_records_on_subject(conn, subject, scope.kind, scope.id)
    return records, None if cosines is None else {int(seq): float(cosine) for seq, cosine in cosines.fetchall()}


def _compare(content: str, record: Record, cosine: float) -> dict:
    subject_words = set((record.attribute or "").split("_")) - {""}
    comparison = compare_claims(content, record.content, subject_words)
    return {"record_id": record.id, "cosine": round(float(cosine), 4), "same": comparison.same,
            "differences": comparison.differences, "added_terms": comparison.added_terms}


def find_same_claim(conn, index, *, content: str, record_type: str, scope: Scope, subject: str | None,
                    vector, settings: WriteSettings, live_on_subject: list[Record],
                    cosines: dict[int, float] | None = None) -> Match:
    """The existing record this write restates, if any (the duplicate search). ``cosines`` are the
    same-subject records' cosines when :func:`same_subject_records` read them."""
    match = Match()
    if subject is not None:
        if not live_on_subject:
            return match
        if cosines is None:
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
    rows: dict[int, Record] | None = None
    if hasattr(index, "search_with_rows"):  # PostgreSQL: the neighbours' rows come with them, in one statement
        hits, _, found_rows = index.search_with_rows(vector, NEIGHBOURS, mask, SELECT_COLUMNS)
        rows = {int(row["seq"]): record_from_row(row) for row in found_rows}
    else:
        hits = index.search(vector, NEIGHBOURS, mask)
    for seq, cosine in hits:
        if cosine < settings.duplicate_threshold:
            break
        found = rows.get(int(seq)) if rows is not None else record_at_seq(conn, seq)
        if found is None or found.status not in LIVE_STATUSES or found.subject is not None:
            continue  # a record with a subject never absorbs a subject-less write
        compared = _compare(content, found, cosine)
        match.compared.append(compared)
        if compared["same"]:
            match.reinforce = found
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


# -- the same fact, saved twice ------------------------------------------------------------------


@dataclass(frozen=True)
class FactProbe:
    """What decides whether two records state the same fact (a record's, or a write's before it is one)."""

    scope: str  # "<kind>:<id>"
    text: str  # fact_text of the content
    source_ref: str | None  # the session (or other source) the record was written from
    evidence_turn: int | None  # the transcript turn its quote was found in

    @classmethod
    def of(cls, record: Record) -> "FactProbe":
        return cls(record.scope, fact_text(record.content), record.source_ref, record.evidence_turn)


def fact_text(content: str | None) -> str:
    """Content in the form compared for "the same fact": case, whitespace and typographic quotes
    folded (``text.quote_fold``, the quote locator's rule) and trailing sentence punctuation dropped.
    Nothing fuzzier: a paraphrase is a different text (see docs/write-path.md)."""
    return fold(content or "").rstrip(_SENTENCE_END)


def states_same_fact(a: FactProbe, b: FactProbe) -> bool:
    """Same owner scope, the same words, and the same evidence: the same source session, and the
    same turn unless one side has no located quote (an unevidenced write in that session)."""
    if not a.text or a.text != b.text or a.scope != b.scope:
        return False
    if a.source_ref is None or a.source_ref != b.source_ref:
        return False
    return a.evidence_turn is None or b.evidence_turn is None or a.evidence_turn == b.evidence_turn


def _long_words(probe: FactProbe) -> list[str]:
    # A long session holds many records: let SQL drop those missing one of the longest words (only
    # for ASCII text, where LIKE's case rule and casefold agree; "Straße" folds to "strasse").
    return sorted(set(re.findall(r"[a-z0-9]+", probe.text)), key=len, reverse=True)[:4] if probe.text.isascii() else []


def same_fact_read(conn, probe: FactProbe):
    """The read :func:`same_fact_records` makes for ``probe``, started now and answered later (on
    PostgreSQL it travels with the transaction's next statement); None if there is nothing to read."""
    if probe.source_ref is None or not probe.text:
        return None
    return live_rows_from_source_later(conn, probe.source_ref, _long_words(probe))


def same_fact_records(conn, probe: FactProbe, *, exclude: set[str] | frozenset[str] = frozenset(), read=None) -> list[Record]:
    """Live records (not session summaries) stating the same fact as ``probe``, oldest first (one
    lookup on the ``records_source`` index). ``read`` is :func:`same_fact_read`'s answer for this
    probe, when it was started earlier."""
    if probe.source_ref is None or not probe.text:
        return []
    rows = read.fetchall() if read is not None else live_rows_from_source(conn, probe.source_ref, _long_words(probe))
    return [record_from_row(r) for r in rows if r["id"] not in exclude and states_same_fact(
        probe, FactProbe(f"{r['scope_kind']}:{r['scope_id']}", fact_text(r["content"]), r["source_ref"], r["evidence_turn"]))]


def find_same_fact(conn, probe: FactProbe, record_type: str, read=None) -> Record | None:
    """The record of ``record_type`` a write restates word for word from the same evidence (the
    first one saved), if any. Only its own type: folding an episodic write into a semantic record
    would drop the event (a forget still takes both, see ``ingest/erasure.py``)."""
    found = [r for r in same_fact_records(conn, probe, read=read) if r.type == record_type]
    return found[0] if found else None
