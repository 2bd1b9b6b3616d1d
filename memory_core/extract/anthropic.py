"""Extractor and reviewer backed by a hosted or served model (Claude Haiku 4.5 class, or any model
behind an OpenAI-compatible server).

Both send one request through the :class:`~memory_core.llm.LanguageModel` their role was given
(:mod:`memory_core.llm.factory` chooses it from settings), which validates the reply against the
pydantic models in :mod:`.candidates`. A timeout, API error or invalid reply raises
ExternalServiceError; the runner turns that into a failed, retryable attempt with nothing written.
The prompts ask for conservative output, but no rule depends on the model obeying them: evidence,
dates, source kinds and revision limits are enforced in code.
"""

from __future__ import annotations

import json

from ..clock import format_ts
from .candidates import Candidate, ExtractionOutput, ReviewDecision, ReviewItem, Transcript

EXTRACTOR_SYSTEM = """\
You read a finished conversation between a user and an AI agent and propose long-term memories.

Propose a candidate only for something the transcript states plainly:
- the user's own preferences, facts about themselves, decisions, corrections, and plans that come with a date;
- a decision the conversation reached (type "episodic").
Never propose anything from a question, a hypothetical or conditional ("if", "would", "maybe"), a hedge,
a joke or sarcasm, something the user later takes back, or what a third party said or thinks.
Keep negations as negations; never flip a statement's polarity.

For every candidate:
- "evidence" is an exact, verbatim copy of a span of ONE turn (same words, same order), and
  "evidence_turn" is that turn's number.
- "source_kind" is "user_statement" only when a user turn says it outright, else "agent_inference".
- "attribute" (snake_case) only for single-valued facts that a newer value replaces (home_city, employer).
- "about" names the entity when the record is not about the user themself.
- "target" is one of the write targets listed; use "personal" unless the record clearly belongs to a project.
- valid_from / valid_until / review_at only when the evidence turn contains the temporal expression;
  copy that expression verbatim into "expression" (e.g. "next Tuesday"). A plan's review_at is its date.
Also write "summary": two or three factual sentences on what happened and what was decided, with a
verbatim "evidence" quote from one turn and its "evidence_turn". Propose nothing rather than guess."""

REVIEWER_SYSTEM = """\
You review one proposed memory before it is stored. You see the candidate, its evidence quote,
the turns around it and related records already stored. Answer:
- "accept" if the evidence plainly supports the content as a durable memory;
- "reject" if it comes from a question, hypothetical, joke, sarcasm, hedge, retraction, a third
  party's words, or if the content claims more than the quote says;
- "revise" to NARROW it: a more precise content that claims less, or fewer or tighter dates.
A revision may change only "content" and the temporal fields (or list fields to drop in
"drop_temporal"). Do not change the type, attribute, entity, evidence, source kind or target.
Give a one-sentence "reason"."""


class ModelExtractor:
    """Proposes candidates and a summary with one structured-output request."""

    def __init__(self, llm, *, timeout_s: float, max_tokens: int) -> None:
        self.llm = llm
        self.name = getattr(llm, "provider", "anthropic")  # the run log shows provider:model
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    def prompt(self, transcript: Transcript) -> str:
        targets = ", ".join(sorted(transcript.write_targets)) or "personal"
        part = (f"This is one part of a long session ({transcript.part}); the other parts are read separately, "
                "so propose only what these turns state.\n\n") if transcript.part else ""
        return (
            f"Session {transcript.session_id}, started {format_ts(transcript.started_at)}; agent "
            f"{transcript.agent_id}, user {transcript.user_id}. Write targets: {targets}.\n\n"
            f"{part}TRANSCRIPT:\n{transcript.render()}"
        )

    def extract(self, transcript: Transcript) -> tuple[ExtractionOutput, dict]:
        """Raises ExternalServiceError on timeout, API error or a reply that fails validation (kind
        ``output_too_large`` when the reply was cut at the token limit: the runner then splits the part)."""
        output = self.llm.ask(system=EXTRACTOR_SYSTEM, prompt=self.prompt(transcript), schema=ExtractionOutput,
                              max_tokens=self.max_tokens, timeout=self.timeout_s)
        return output, {"model": getattr(self.llm, "model", None), "prompt_turns": len(transcript.turns)}


def _candidate_view(candidate: Candidate) -> dict:
    return candidate.model_dump(exclude_none=True)


class ModelReviewer:
    """Reviews one candidate per request; fails closed (raises) on any model failure."""

    def __init__(self, llm, *, timeout_s: float, max_tokens: int = 800) -> None:
        self.llm = llm
        self.name = getattr(llm, "provider", "anthropic")
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens

    def prompt(self, item: ReviewItem) -> str:
        context = "\n".join(f"[turn {t.turn} | {t.role} | {format_ts(t.at)}]\n{t.content}" for t in item.context)
        related = [
            {k: r.get(k) for k in ("id", "content", "type", "status", "source_kind", "created_at", "same_subject")}
            for r in item.related
        ]
        return (
            f"CANDIDATE ({item.kind}):\n{json.dumps(_candidate_view(item.candidate), ensure_ascii=False, indent=1)}\n\n"
            f"EVIDENCE found in turn {item.evidence_turn} ({item.evidence_role} turn).\n\n"
            f"SURROUNDING TURNS:\n{context}\n\n"
            f"RELATED LIVE RECORDS:\n{json.dumps(related, ensure_ascii=False, indent=1) if related else '(none)'}"
        )

    def review(self, item: ReviewItem) -> ReviewDecision:
        """Raises ExternalServiceError on timeout, API error or invalid output."""
        return self.llm.ask(system=REVIEWER_SYSTEM, prompt=self.prompt(item), schema=ReviewDecision,
                            max_tokens=self.max_tokens, timeout=self.timeout_s)


# The names from before other providers existed (hosts and tests import them).
AnthropicExtractor = ModelExtractor
AnthropicReviewer = ModelReviewer
