"""Entities: listing, linked records, and merge proposals.

Nothing merges automatically. A *proposal* is a pair of live entities in the same scope that
look like the same thing: they share an alias, their names are equal once case, punctuation
and spacing are ignored, they use the same words in another order, one name's words are all in
the other ("Atlas" and "Project Atlas"), or their names are within a small edit distance. An
operator reads the core's exact merge preview (:func:`merge_preview`) and approves
(``actions.merge_entities``) or ignores it. Entities in different scopes are never proposed,
since the core refuses such merges.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from memory_core.text import normalise_alias
from memory_core.service.admin_methods import ENTITY_KINDS, EntityFilter

from .pagination import Page

__all__ = ["ENTITY_KINDS", "EntityFilter"]

# Edit-distance comparisons are pairwise; beyond this many entities in one scope only the
# exact keys (shared alias, normalised name) are used.
MAX_FUZZY_SCOPE_SIZE = 2000


def list_entities(service, flt: EntityFilter, page: int = 1, page_size: int = 50) -> Page:
    """One page of entities with alias and linked-record counts."""
    return Page.of(service.browse_entities(flt, page=page, page_size=page_size))


def linked_records(service, entity_id: str, page: int = 1, page_size: int = 50) -> Page:
    """Records linked to an entity, newest first, with the link role."""
    return Page.of(service.entity_records(entity_id, page=page, page_size=page_size))


def same_alias_elsewhere(service, entity_id: str) -> list[dict]:
    """Entities in *other* scopes sharing an alias with this one (shown, never proposed)."""
    return service.same_alias_elsewhere(entity_id)


def entity(service, entity_id: str) -> dict | None:
    """An entity with its scope and aliases, or None."""
    return service.entity(entity_id)


# -- merge proposals ---------------------------------------------------------------------------


def name_words(name: str) -> frozenset[str]:
    """The words of a name, case and accents folded: 'Atlas project' → {'atlas', 'project'}."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    cleaned = "".join(ch if ch.isalnum() else " " for ch in decomposed if not unicodedata.combining(ch))
    return frozenset(cleaned.split())


def name_key(name: str) -> str:
    """Case, accents, punctuation and spacing removed: 'Project-Atlas ' → 'projectatlas'."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Levenshtein distance, giving up (returning ``limit + 1``) once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


@dataclass
class MergeProposal:
    """Merge ``source`` into ``target`` (both dicts: id, name, kind, scope, ...), with the reasons."""

    source: dict[str, Any]
    target: dict[str, Any]
    reasons: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.source['id']}->{self.target['id']}"

    def row(self) -> dict[str, Any]:
        return {"scope": self.source["scope"], "merge": self.source["name"], "source_id": self.source["id"],
                "into": self.target["name"], "target_id": self.target["id"], "why": "; ".join(self.reasons)}


def _choose_target(a: dict, b: dict) -> tuple[dict, dict]:
    """Keep the confirmed, better-linked, older entity; returns (source, target)."""
    def keep_first(e: dict) -> tuple:
        return (e.get("status") != "confirmed", -int(e.get("records") or 0), e.get("created_at") or "", e["id"])

    target, source = sorted((a, b), key=keep_first)
    return source, target


def _compatible(a: dict, b: dict) -> bool:
    return a["kind"] == b["kind"] or "other" in (a["kind"], b["kind"])


def propose_merges(entities: list[dict[str, Any]], max_distance: int = 2, min_length: int = 5) -> list[MergeProposal]:
    """Candidate merges among ``entities`` (dicts with id, name, kind, scope, status, aliases list).

    Pure: it only reads the given data. Entities already merged are skipped.
    """
    by_scope: dict[str, list[dict]] = defaultdict(list)
    for e in entities:
        if e.get("status") != "merged":
            by_scope[e["scope"]].append(e)
    found: dict[tuple[str, str], list[str]] = {}
    lookup = {e["id"]: e for e in entities}

    def note(a: dict, b: dict, reason: str) -> None:
        if a["id"] == b["id"] or not _compatible(a, b):
            return
        pair = tuple(sorted((a["id"], b["id"])))
        reasons = found.setdefault(pair, [])
        if reason not in reasons:
            reasons.append(reason)

    for scope, members in by_scope.items():
        by_alias: dict[str, list[dict]] = defaultdict(list)
        by_name: dict[str, list[dict]] = defaultdict(list)
        for e in members:
            for alias in {normalise_alias(a) for a in [e["name"], *e.get("aliases", [])]}:
                if alias:
                    by_alias[alias].append(e)
            by_name[name_key(e["name"])].append(e)
        for alias, group in by_alias.items():
            for i, a in enumerate(group):
                for b in group[i + 1:]:
                    note(a, b, f"same alias '{alias}' in {scope}")
        for key, group in by_name.items():
            for i, a in enumerate(group):
                for b in group[i + 1:]:
                    note(a, b, "names equal ignoring case, punctuation and spacing")
        by_words: dict[frozenset, list[dict]] = defaultdict(list)
        for e in members:
            by_words[name_words(e["name"])].append(e)
        for words, group in by_words.items():
            for i, a in enumerate(group):
                for b in group[i + 1:]:
                    if name_key(a["name"]) != name_key(b["name"]):
                        note(a, b, "the same words in another order")
        if len(members) > MAX_FUZZY_SCOPE_SIZE:
            continue
        for a in members:
            wa = name_words(a["name"])
            for b in members:
                wb = name_words(b["name"])
                if a["id"] != b["id"] and wa and wa < wb and max(len(w) for w in wa) >= min_length - 1:
                    note(a, b, f"every word of '{a['name']}' is in '{b['name']}'")
        keys = sorted(((name_key(e["name"]), e) for e in members), key=lambda item: len(item[0]))
        for i, (ka, a) in enumerate(keys):
            for kb, b in keys[i + 1:]:
                if len(kb) - len(ka) > max_distance:
                    break
                if ka == kb or min(len(ka), len(kb)) < min_length:
                    continue
                distance = edit_distance(ka, kb, max_distance)
                if distance <= max_distance:
                    note(a, b, f"names differ by {distance} character{'s' if distance > 1 else ''}")
    proposals = []
    for (a_id, b_id), reasons in sorted(found.items()):
        source, target = _choose_target(lookup[a_id], lookup[b_id])
        proposals.append(MergeProposal(source, target, reasons))
    return proposals


def merge_proposals(service, scope: str | None = None) -> list[MergeProposal]:
    """Proposals over the live entities of the store (optionally one scope)."""
    return propose_merges(service.live_entities(scope))


def merge_preview(service, source_id: str, target_id: str) -> tuple[dict, dict[str, list[dict]]]:
    """The core's exact preview of merging ``source_id`` into ``target_id``, and the same as tables:
    records relinked (with their status and content), subjects rewritten, aliases moved, collisions."""
    preview = service.merge_preview(source_id, target_id)
    records = service.records_by_ids([r["record_id"] for r in preview["relinked_records"]])
    relinked = [{"record_id": r["record_id"], "role": r["role"], "status": getattr(records.get(r["record_id"]), "status", ""),
                 "content": getattr(records.get(r["record_id"]), "content", "")} for r in preview["relinked_records"]]
    return preview, {
        "relinked": relinked,
        "subjects": [dict(c) for c in preview["subject_changes"]],
        "aliases": [{"alias": a} for a in preview["aliases_moved"]],
        "collisions": [dict(c) for c in preview["subject_collisions"]],
    }
