"""Lifecycle rules as pure functions: source ranks, initial status and confidence, expiry."""

from __future__ import annotations

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


def normalise_alias(text: str) -> str:
    """Alias matching key: case-folded, whitespace collapsed, surrounding punctuation dropped."""
    return " ".join(text.casefold().split()).strip(".,;:!?\"'()[]{}")
