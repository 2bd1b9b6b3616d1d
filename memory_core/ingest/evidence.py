"""Evidence checks for write path A (and the extraction validator).

Two questions, asked in order:
1. Is the quote in the current session's transcript, in a turn of the right role (a user turn for
   ``user_statement``, a tool turn for ``tool_result``)? Matching is verbatim after folding case,
   whitespace and typographic quotes; nothing fuzzier.
2. Does the quote entail the content? The offline judge is deliberately conservative (see
   docs/write-path.md): polarity and numbers must agree and most of the content's meaningful
   terms must appear in the quote; a borderline case is decided by embedding similarity.
   An Anthropic judge can be configured instead.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Callable

import numpy as np
from pydantic import BaseModel, Field

from ..store.write_queries import session_turns
from ..text import NUMBER as _NUMBER, has_negation, meaningful_terms, quote_fold as fold, quote_in

ROLE_FOR_SOURCE = {"user_statement": "user", "tool_result": "tool"}


@dataclass
class QuoteLocation:
    turn: int
    role: str
    at: str


def locate_quote(conn: sqlite3.Connection, session_id: str, quote: str, role: str | None = None) -> QuoteLocation | None:
    """The first turn of ``session_id`` (optionally of ``role``) that contains ``quote``."""
    if not fold(quote):
        return None
    for row in session_turns(conn, session_id, role):
        if quote_in(quote, row["content"]):
            return QuoteLocation(row["turn"], row["role"], row["at"])
    return None


@dataclass
class Entailment:
    entailed: bool
    reason: str
    coverage: float | None = None
    cosine: float | None = None
    judge: str = "offline"

    def to_dict(self) -> dict:
        return {"entailed": self.entailed, "reason": self.reason, "coverage": self.coverage, "cosine": self.cosine, "judge": self.judge}


class OfflineEntailmentJudge:
    """Lexical coverage with polarity and number agreement, and an embedding tie-break."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], min_coverage: float, min_cosine: float) -> None:
        self._embed = embed
        self.min_coverage = min_coverage
        self.min_cosine = min_cosine

    def judge(self, quote: str, content: str) -> Entailment:
        if has_negation(quote) != has_negation(content):
            return Entailment(False, "the quote and the content disagree in polarity (one is negated)")
        numbers_quote = set(_NUMBER.findall(quote))
        missing_numbers = [n for n in _NUMBER.findall(content) if n not in numbers_quote]
        if missing_numbers:
            return Entailment(False, f"numbers in the content are not in the quote: {', '.join(missing_numbers)}")
        content_terms = meaningful_terms(content)
        if not content_terms:
            return Entailment(False, "the content has no meaningful terms to check")
        quote_terms = meaningful_terms(quote)
        coverage = len(content_terms & quote_terms) / len(content_terms)
        if coverage >= self.min_coverage:
            return Entailment(True, f"{coverage:.0%} of the content's terms appear in the quote", coverage)
        if coverage < 0.3:
            missing = sorted(content_terms - quote_terms)[:6]
            return Entailment(False, f"only {coverage:.0%} of the content's terms appear in the quote (missing: {', '.join(missing)})", coverage)
        vectors = self._embed([quote, content])
        cosine = float(vectors[0] @ vectors[1])
        if cosine >= self.min_cosine:
            return Entailment(True, f"{coverage:.0%} term coverage and cosine {cosine:.2f} >= {self.min_cosine:.2f}", coverage, cosine)
        return Entailment(False, f"{coverage:.0%} term coverage and cosine {cosine:.2f} < {self.min_cosine:.2f}", coverage, cosine)


class _Verdict(BaseModel):
    entailed: bool
    reason: str = Field(max_length=500)


class ModelEntailmentJudge:
    """Asks the entailment role's model (Anthropic or OpenAI-compatible) whether the quote supports
    the content; falls back to the offline check when the model fails."""

    SYSTEM = (
        "You check evidence for a memory system. Decide whether the QUOTE, said by the user or returned "
        "by a tool, on its own supports every claim in the CONTENT. Paraphrase is fine; anything the quote "
        "does not say, hedges, negates or only hypothesises is not supported."
    )

    def __init__(self, llm, fallback: OfflineEntailmentJudge) -> None:
        self._llm = llm
        self._fallback = fallback

    def judge(self, quote: str, content: str) -> Entailment:
        from ..errors import ExternalServiceError

        try:
            verdict = self._llm.ask(system=self.SYSTEM, prompt=f"QUOTE:\n{quote}\n\nCONTENT:\n{content}", schema=_Verdict, max_tokens=200)
        except ExternalServiceError as exc:
            result = self._fallback.judge(quote, content)
            result.reason = f"hosted judge unavailable ({exc.message}); offline: {result.reason}"
            return result
        return Entailment(verdict.entailed, verdict.reason, judge=getattr(self._llm, "provider", "anthropic"))


AnthropicEntailmentJudge = ModelEntailmentJudge  # the name from before other providers existed
