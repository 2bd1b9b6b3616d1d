"""What a reviewer's revision may change, enforced in code.

A revision narrows: its content may claim less than the candidate (no new terms or numbers that
neither the candidate nor its quote contains, same polarity) and its dates may be removed or
re-stated. It may never strengthen the source kind, replace the evidence, move the record to
another write target, retarget the primary entity, change the record type or attribute, or add
entity mentions. Such changes are overridden (the original value is kept) and logged; a content
change that broadens the claim cannot be repaired, so the candidate is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..text import has_negation, meaningful_terms
from .candidates import TEMPORAL_FIELDS, Candidate, CandidateRevision

_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


@dataclass
class RevisionResult:
    candidate: Candidate | None  # None when the revision had to be refused
    overrides: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    refused: str | None = None

    def to_dict(self) -> dict:
        return {"overrides": self.overrides, "applied": self.applied, "refused": self.refused}


def broadening(original: Candidate, content: str) -> str | None:
    """Why ``content`` claims more than the candidate and its quote, or None if it only narrows."""
    allowed_terms = meaningful_terms(original.content) | meaningful_terms(original.evidence)
    new_terms = sorted(meaningful_terms(content) - allowed_terms)
    if new_terms:
        return f"the revised content adds terms found in neither the candidate nor its quote: {', '.join(new_terms[:6])}"
    allowed_numbers = set(_NUMBER.findall(original.content)) | set(_NUMBER.findall(original.evidence))
    new_numbers = [n for n in _NUMBER.findall(content) if n not in allowed_numbers]
    if new_numbers:
        return f"the revised content adds numbers: {', '.join(new_numbers)}"
    if has_negation(content) != has_negation(original.content):
        return "the revised content flips the candidate's polarity"
    return None


def apply_revision(original: Candidate, revision: CandidateRevision | None) -> RevisionResult:
    """The candidate after a reviewer's revision, with forbidden changes overridden."""
    if revision is None:
        return RevisionResult(original, refused=None, applied=[], overrides=["a 'revise' verdict came without a revision; the candidate is unchanged"])
    overrides: list[str] = []
    updates: dict = {}
    applied: list[str] = []

    if revision.source_kind is not None and revision.source_kind != original.source_kind:
        if revision.source_kind == "agent_inference":
            updates["source_kind"] = revision.source_kind
            applied.append(f"source_kind weakened to {revision.source_kind}")
        else:
            overrides.append(f"source_kind {revision.source_kind!r} would strengthen {original.source_kind!r}; kept {original.source_kind!r}")
    if revision.evidence is not None and revision.evidence != original.evidence:
        overrides.append("evidence may not be replaced; kept the extractor's verbatim quote")
    if revision.target is not None and revision.target != original.target:
        overrides.append(f"write target {revision.target!r} may not replace {original.target!r}")
    if revision.about is not None and revision.about != original.about:
        overrides.append(f"primary entity {revision.about!r} may not replace {original.about!r}")
    if revision.type is not None and revision.type != original.type:
        overrides.append(f"type {revision.type!r} may not replace {original.type!r}")
    if revision.attribute is not None and revision.attribute != original.attribute:
        overrides.append(f"attribute {revision.attribute!r} may not replace {original.attribute!r}")
    if revision.mentions is not None:
        kept = [m for m in revision.mentions if m in original.mentions]
        if len(kept) < len(revision.mentions):
            overrides.append("added entity mentions were dropped")
        if kept != original.mentions:
            updates["mentions"] = kept
            applied.append("mentions narrowed")

    if revision.content is not None and revision.content != original.content:
        why = broadening(original, revision.content)
        if why:
            return RevisionResult(None, overrides, applied, refused=why)
        updates["content"] = revision.content
        applied.append("content narrowed")

    for name in TEMPORAL_FIELDS:
        if name in revision.drop_temporal and getattr(original, name) is not None:
            updates[name] = None
            applied.append(f"{name} dropped")
        elif getattr(revision, name) is not None:
            updates[name] = getattr(revision, name)
            applied.append(f"{name} restated as {getattr(revision, name).expression!r}")
    return RevisionResult(original.model_copy(update=updates), overrides, applied)
