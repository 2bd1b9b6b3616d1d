"""Lifecycle rules as pure functions: source ranks, initial status and confidence, expiry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

SOURCE_RANK = {
    "user_statement": 4,
    "system": 3,
    "tool_result": 2,
    "session_summary": 2,
    "agent_inference": 1,
}

INITIAL_CONFIDENCE = {
    "user_statement": 0.95,
    "system": 0.95,
    "tool_result": 0.9,
    "session_summary": 0.8,
    "agent_inference": 0.5,
}

# What a model may claim through memory_write; system facts and summaries come from the host.
MODEL_SOURCE_KINDS = ("user_statement", "tool_result", "agent_inference")
EVIDENCED_SOURCE_KINDS = ("user_statement", "tool_result")


def initial_status(source_kind: str) -> str:
    """Status follows the source alone: inferences are provisional, everything else confirmed."""
    return "provisional" if source_kind == "agent_inference" else "confirmed"


def may_supersede(new_source: str, old_source: str) -> bool:
    """A record supersedes another only if its source rank is equal or higher."""
    return SOURCE_RANK[new_source] >= SOURCE_RANK[old_source]


def reinforced_confidence(confidence: float) -> float:
    """Each reinforcement closes a third of the gap to 1.0."""
    return round(min(0.99, confidence + (1.0 - confidence) / 3.0), 4)


def normalise_attribute(text: str | None) -> str | None:
    """``"Answer style"`` → ``"answer_style"``; empty stays None."""
    if text is None:
        return None
    out = []
    for ch in text.strip().casefold():
        out.append(ch if ch.isalnum() else "_")
    norm = "_".join(part for part in "".join(out).split("_") if part)
    return norm or None


# -- reinforcement and promotion: the one place these rules live ---------------------------------


@dataclass(frozen=True)
class Observation:
    """Someone stating (or confirming) an existing record's claim again.

    ``evidenced`` means a quote was located in the observing session's transcript; ``person``
    means a person confirmed the record in the admin app.
    """

    session_id: str | None
    agent_id: str | None
    source_kind: str
    evidenced: bool = False
    person: bool = False


@dataclass
class Reinforcement:
    """The field changes one observation makes to a record, and why."""

    fields: dict[str, Any]
    independent: bool
    promoted: bool
    notes: list[str]


def is_independent(last_observed_session: str | None, observation: Observation) -> bool:
    """Does this observation count toward promotion?

    A person's confirmation does. Otherwise it must come from another session than the last
    observation *and* carry evidence located in that session's transcript: an agent repeating
    its own unevidenced guess later (or another agent repeating it) is not a new observation.
    """
    if observation.person:
        return True
    if observation.session_id is None or observation.session_id == last_observed_session:
        return False
    return observation.evidenced


def plan_reinforcement(
    *, status: str, source_kind: str, confidence: float, observations: int, expires_at: datetime | None,
    last_observed_session: str | None, observation: Observation, now: datetime,
    promote_after: int, extension_days: float,
) -> Reinforcement:
    """What reinforcing a record changes (pure; the caller writes ``fields``).

    Confidence closes a third of the gap to 1.0. A stronger source replaces the record's source
    (the caller adds its evidence). A provisional record is promoted to confirmed by a stronger
    source whose initial status is confirmed, by a person's confirmation, or once its independent
    observations reach ``promote_after``; otherwise its expiry moves ``extension_days`` past now.
    """
    notes: list[str] = []
    independent = is_independent(last_observed_session, observation)
    count = observations + (1 if independent else 0)
    fields: dict[str, Any] = {"confidence": reinforced_confidence(confidence), "observations": count}
    if observation.session_id and independent:  # an observation that did not count must not block one that does
        fields["last_observed_session"] = observation.session_id
    new_source = source_kind
    if SOURCE_RANK[observation.source_kind] > SOURCE_RANK[source_kind]:
        new_source = observation.source_kind
        fields["source_kind"] = new_source
        notes.append(f"stronger source {new_source} replaced {source_kind}")
    if not independent and not observation.person:
        notes.append("not an independent observation (same session, or no evidence located in this session)")
    promoted = False
    if status == "provisional":
        if initial_status(new_source) == "confirmed" or observation.person or count >= promote_after:
            fields.update(status="confirmed", expires_at=None)
            promoted = True
            notes.append("promoted from provisional to confirmed")
        else:
            extended = now + timedelta(days=extension_days)
            if expires_at is None or extended > expires_at:
                fields["expires_at"] = extended
    return Reinforcement(fields, independent, promoted, notes)
