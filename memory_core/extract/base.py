"""Extractor and reviewer contracts, their factories, and transcript loading.

An extractor turns a :class:`Transcript` into ``(ExtractionOutput, info)``; a reviewer turns a
:class:`ReviewItem` into a :class:`ReviewDecision`. Both raise ExternalServiceError when a hosted
model fails, which fails the attempt closed. Which implementation runs is a setting; core logic
never imports a model client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..clock import parse_ts
from ..errors import NotFoundError
from ..store.db import Store, loads
from ..store.extract_queries import session_row
from ..store.write_queries import session_turns
from .anthropic import ModelExtractor, ModelReviewer
from .candidates import ExtractionOutput, ReviewDecision, ReviewItem, Transcript, Turn
from .offline import OfflineExtractor, OfflineReviewer

if TYPE_CHECKING:
    from .deps import ExtractionDeps


class Extractor(Protocol):
    name: str

    def extract(self, transcript: Transcript) -> tuple[ExtractionOutput, dict]: ...


class Reviewer(Protocol):
    name: str

    def review(self, item: ReviewItem) -> ReviewDecision: ...


def _role_llm(deps: ExtractionDeps, role: str):
    return getattr(deps.models, role) if deps.models is not None else deps.llm


def _hosted(choice: str, llm) -> tuple[bool, str | None]:
    if choice == "offline":
        return False, None
    if llm is None:
        return False, f"{choice} requested but no Anthropic API key is configured; using offline" if choice == "anthropic" else None
    return True, None


def build_extractor(deps: ExtractionDeps) -> Extractor:
    """The configured extractor (offline unless settings, and a key or a server, say otherwise)."""
    settings = deps.settings
    llm = _role_llm(deps, "extractor")
    hosted, note = _hosted(settings.extractor, llm)
    if hosted:
        return ModelExtractor(llm, timeout_s=settings.extractor_timeout_s, max_tokens=settings.extractor_max_tokens)
    extractor = OfflineExtractor()
    extractor.fallback_note = note  # type: ignore[attr-defined]
    return extractor


def build_reviewer(deps: ExtractionDeps) -> Reviewer:
    """The configured reviewer (offline unless settings, and a key or a server, say otherwise)."""
    settings = deps.settings
    llm = _role_llm(deps, "reviewer")
    hosted, note = _hosted(settings.reviewer, llm)
    if hosted:
        return ModelReviewer(llm, timeout_s=settings.reviewer_timeout_s)
    reviewer = OfflineReviewer(deps.judge)
    reviewer.fallback_note = note  # type: ignore[attr-defined]
    return reviewer


def describe(component) -> str:
    """A component's name for the run log, with its model when it has one."""
    model = getattr(getattr(component, "llm", None), "model", None)
    return f"{component.name}:{model}" if model else component.name


def load_transcript(store: Store, session_id: str) -> Transcript:
    """The session's principal, write targets and turns, as stored."""
    with store.lock:
        row = session_row(store.conn, session_id)
        turn_rows = session_turns(store.conn, session_id) if row is not None else []
    if row is None:
        raise NotFoundError(f"no session {session_id}", session_id=session_id)
    turns = [Turn(t["turn"], t["role"], t["content"], parse_ts(t["at"])) for t in turn_rows]
    return Transcript(
        session_id=session_id, agent_id=row["agent_id"], user_id=row["user_id"], project_id=row["project_id"],
        write_targets=loads(row["write_targets"], {}), started_at=parse_ts(row["started_at"]), turns=turns,
    )
