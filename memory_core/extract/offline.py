"""The offline extractor and reviewer (the summary is in :mod:`.offline_summary`): deterministic, no model calls.

The extractor reads user turns only and proposes a candidate for a sentence (or a comma-joined
first-person clause) that survives every veto and matches a first-person pattern in
:mod:`.offline_rules`. The evidence is that exact slice of the turn. The reviewer re-checks any
candidate (including ones a hosted extractor proposed) against the whole sentence around its
quote, the turns after it, the offline entailment judge and the live records it could clash with.
"""

from __future__ import annotations

import re

from ..clock import format_ts
from ..text import has_negation
from ..policy.rules import SOURCE_RANK
from .candidates import Candidate, ExtractionOutput, ReviewDecision, ReviewItem, TemporalClaim, Transcript
from .offline_patterns import classify
from .offline_rules import is_joke, is_retraction, split_clauses, split_sentences, veto
from .offline_summary import offline_summary
from .support import supports

MAX_LOGGED_SKIPS = 50


class OfflineExtractor:
    """Conservative rule-based extractor (the embedded default)."""

    name = "offline"

    def extract(self, transcript: Transcript) -> tuple[ExtractionOutput, dict]:
        """Candidates plus a summary, and an info dict listing the sentences it skipped and why."""
        candidates: list[Candidate] = []
        skipped: list[dict] = []
        user_turns = [t for t in transcript.turns if t.role == "user"]
        for position, turn in enumerate(user_turns):
            following = user_turns[position + 1] if position + 1 < len(user_turns) else None
            turn_veto = None
            if is_joke(turn.content):
                turn_veto = "the turn carries a joke or sarcasm marker"
            elif following is not None and following.turn - turn.turn <= 2 and is_retraction(following.content):
                turn_veto = f"the user took it back in turn {following.turn}"
            for sentence in split_sentences(turn.content):
                why = turn_veto or veto(sentence.text)
                if why:
                    skipped.append({"turn": turn.turn, "sentence": sentence.text, "reason": why})
                    continue
                for clause in split_clauses(sentence):
                    proposal = classify(clause.text)
                    if proposal is None:
                        continue
                    temporal = {name: TemporalClaim(expression=expr) for name, expr in proposal.temporal.items()}
                    candidates.append(Candidate(
                        type=proposal.type, content=proposal.content, attribute=proposal.attribute,
                        mentions=proposal.mentions, evidence=clause.text, evidence_turn=turn.turn,
                        source_kind="user_statement", tags=[proposal.category] + (["correction"] if proposal.correction else []),
                        **temporal,
                    ))
        info = {"skipped": skipped[:MAX_LOGGED_SKIPS], "skipped_total": len(skipped), "user_turns": len(user_turns)}
        return ExtractionOutput(candidates=candidates, summary=offline_summary(transcript)), info


def enclosing_sentences(text: str, quote: str) -> str:
    """The sentence(s) of ``text`` that contain ``quote`` (the quote itself if it cannot be placed)."""
    pattern = r"\s+".join(re.escape(word) for word in quote.split())
    match = re.search(pattern, text, re.IGNORECASE) if pattern else None
    if not match:
        return quote
    spans = [s for s in split_sentences(text) if s.end > match.start() and s.start < match.end()]
    if not spans:
        return quote
    return text[spans[0].start : spans[-1].end]


class OfflineReviewer:
    """Deterministic review: context, vetoes, entailment and clashes with stronger records."""

    name = "offline"

    def __init__(self, judge) -> None:
        self.judge = judge

    def review(self, item: ReviewItem) -> ReviewDecision:
        """Accept, reject, or narrow (drop unsupported dates) one candidate."""
        candidate = item.candidate
        if item.kind == "summary":
            return ReviewDecision(verdict="accept", reason="a session summary anchored by a verbatim quote")
        turn = next((t for t in item.context if t.turn == item.evidence_turn), None)
        if turn is None:
            return ReviewDecision(verdict="reject", reason="the evidence turn is not in the transcript")
        sentence = enclosing_sentences(turn.content, candidate.evidence)
        why = veto(sentence)
        if why:
            return ReviewDecision(verdict="reject", reason=f"the sentence around the quote is not a plain statement: {why}")
        if is_joke(turn.content):
            return ReviewDecision(verdict="reject", reason="the evidence turn carries a joke or sarcasm marker")
        later = [t for t in item.context if t.turn > turn.turn and t.role == turn.role]
        if later and is_retraction(later[0].content):
            return ReviewDecision(verdict="reject", reason=f"the speaker took it back in turn {later[0].turn}")
        if has_negation(candidate.evidence) != has_negation(candidate.content):
            return ReviewDecision(verdict="reject", reason="the content and its quote disagree in polarity")
        entailment = supports(self.judge, candidate.evidence, candidate.content)
        if not entailment.entailed:
            return ReviewDecision(verdict="reject", reason=f"the quote does not support the content: {entailment.reason}")
        if item.evidence_role != "user":
            stronger = [r for r in item.related if r.get("same_subject")
                        and SOURCE_RANK.get(r["source_kind"], 0) > SOURCE_RANK["agent_inference"]]
            if stronger:
                return ReviewDecision(
                    verdict="reject",
                    reason=f"an inference would contradict {stronger[0]['id']}, a live {stronger[0]['source_kind']} record on the same subject",
                )
        unsupported = [name for name in ("valid_from", "valid_until", "review_at")
                       if getattr(candidate, name) is not None and getattr(candidate, name).expression.casefold() not in turn.content.casefold()]
        if unsupported:
            return ReviewDecision(
                verdict="revise", reason=f"dropped dates the evidence turn does not state: {', '.join(unsupported)}",
                revision={"drop_temporal": unsupported},
            )
        return ReviewDecision(verdict="accept", reason=f"plain statement in turn {turn.turn} ({format_ts(turn.at)}); {entailment.reason}")
