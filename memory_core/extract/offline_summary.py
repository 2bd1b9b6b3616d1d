"""The offline session summary: an extractive account of what was done and decided, and why.

Every sentence of every turn is scored for what a later reader needs: a decision ("we decided",
"let's go with", "I'll use"), something done ("I've booked", "updated", "sent"), a reason
("because", "since", "so that") and a request ("can you", "please", "I need"). The best few are
quoted verbatim in transcript order, each labelled (Decided, Done, Asked) and attributed to its
speaker; a decision's reason in the next sentence of the same turn is kept with it. Sentences
from a turn with a joke or sarcasm marker, or taken back in the speaker's next turn, are never
quoted, and neither are greetings, thanks, bare questions or requests to forget something (they
name what is to be forgotten). The quote with the highest score is
the summary's evidence. Deterministic, no model call; the Anthropic extractor writes its own
summary when a key is configured, and this one replaces it only when that one fails review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .candidates import SummaryProposal, Transcript, Turn
from .offline_rules import is_joke, is_retraction, split_sentences

MAX_QUOTES = 3
MAX_QUOTE_CHARS = 200

_DECISION = re.compile(
    r"\b(?:decided|decide|agreed|agree|chose|choose|chosen|picked|settled on|going with|go with|opted|we'll use|we will use"
    r"|let's|let us|switch(?:ed|ing)? to|the plan is|final answer|we'll go|we will go|will use|i'll use|i'll go with)\b",
    re.IGNORECASE)
_DONE = re.compile(
    r"\b(?:i've|i have|i just|done|completed|finished|created|updated|booked|sent|fixed|added|set up|scheduled|wrote|written"
    r"|changed|deployed|merged|moved|renamed|removed|deleted|saved|filed|submitted|resolved|cancelled|canceled|ordered)\b",
    re.IGNORECASE)
_REASON = re.compile(r"\b(?:because|since|so that|due to|as it|as they|which means|in order to|the reason)\b", re.IGNORECASE)
_REQUEST = re.compile(r"\b(?:can you|could you|would you|please|i need|i want|help me|i'd like|i would like|let me know)\b", re.IGNORECASE)
# A request to forget names what is to be forgotten: quoting it would keep that text alive.
_FORGET = re.compile(r"\b(?:forget|forgotten|forgot|erase|erased|don't (?:store|save|keep|remember)|not (?:be )?stored)\b", re.IGNORECASE)
_TENTATIVE = re.compile(r"\b(?:maybe|perhaps|might|not sure|let's see|we'll see|for now)\b", re.IGNORECASE)
_SMALL_TALK = re.compile(
    r"^\W*(?:hi|hello|hey|thanks|thank you|cheers|ok|okay|sure|great|cool|nice|perfect|sounds good|got it|bye|good (?:morning|night))\b",
    re.IGNORECASE)

_SPECIFIC = re.compile(r"\d|\b[A-Z][a-z]+\b")


@dataclass
class _Scored:
    turn: Turn
    text: str
    score: float
    label: str
    order: tuple[int, int]


def _quotable_turns(transcript: Transcript) -> list[Turn]:
    """Turns whose words may be quoted: no joke marker, not taken back by the same speaker next."""
    turns = [t for t in transcript.turns if t.role in ("user", "assistant")]
    keep = []
    for i, turn in enumerate(turns):
        if is_joke(turn.content):
            continue
        later = next((t for t in turns[i + 1:] if t.role == turn.role), None)
        if later is not None and later.turn - turn.turn <= 2 and is_retraction(later.content):
            continue
        keep.append(turn)
    return keep


def _score(turn: Turn, text: str) -> tuple[float, str]:
    words = len(text.split())
    if words < 4 or len(text) > 280 or _SMALL_TALK.match(text) and words < 8 or _FORGET.search(text):
        return 0.0, ""
    decision, done, reason, request = (bool(p.search(text)) for p in (_DECISION, _DONE, _REASON, _REQUEST))
    decision = decision and not _TENTATIVE.search(text)  # "maybe, let's see" decides nothing
    if text.rstrip().endswith("?") and not request:
        return 0.0, ""
    if done and turn.role == "user" and not decision:
        done = False  # "I've been busy" from the user is not work done in this session
    score = 3.0 * decision + 2.0 * done + 1.5 * reason + 1.0 * request
    score += 0.5 * bool(_SPECIFIC.search(text, 1))  # a number or a name after the first word
    label = "Decided" if decision else "Done" if done else "Asked" if request else "Noted"
    return score, label


def _cut(text: str) -> str:
    if len(text) <= MAX_QUOTE_CHARS:
        return text
    cut = text[:MAX_QUOTE_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def _candidates(transcript: Transcript) -> list[_Scored]:
    out: list[_Scored] = []
    for turn in _quotable_turns(transcript):
        sentences = split_sentences(turn.content)
        for index, sentence in enumerate(sentences):
            score, label = _score(turn, sentence.text)
            if score < 1.0:
                continue
            text = sentence.text
            following = sentences[index + 1].text if index + 1 < len(sentences) else ""
            if label == "Decided" and not _REASON.search(text) and _REASON.match(following.strip()):
                # "We'll use SQLite. Because it is single-process." keeps its reason (one verbatim span).
                text = turn.content[sentence.start: sentences[index + 1].end]
                score += 1.5
            out.append(_Scored(turn, _cut(text), score, label, (turn.turn, sentence.start)))
    return out


def offline_summary(transcript: Transcript) -> SummaryProposal | None:
    """Who, when, and the few sentences that say what was asked, decided and done (None without turns)."""
    turns = transcript.turns
    if not turns:
        return None
    first_at = turns[0].at
    header = (f"Session on {first_at.day} {first_at.strftime('%B %Y')} between user {transcript.user_id} and agent "
              f"{transcript.agent_id} ({len(turns)} turns).")
    scored = _candidates(transcript)
    best = sorted(scored, key=lambda s: (-s.score, s.order))[:MAX_QUOTES]
    if not best:
        anchor = _fallback_anchor(transcript)
        return SummaryProposal(content=header + " Nothing was decided or done that the offline summary recognises.",
                               evidence=anchor[1], evidence_turn=anchor[0].turn)
    parts = []
    for item in sorted(best, key=lambda s: s.order):
        speaker = "the user" if item.turn.role == "user" else "the assistant"
        parts.append(f"{item.label} ({speaker}): \u201c{item.text}\u201d")
    top = best[0]
    return SummaryProposal(content=header + " " + " ".join(parts), evidence=top.text, evidence_turn=top.turn.turn)


def _fallback_anchor(transcript: Transcript) -> tuple[Turn, str]:
    """A verbatim, non-joking sentence to anchor a summary that found nothing to report."""
    for turn in _quotable_turns(transcript) or transcript.turns:
        for sentence in split_sentences(turn.content):
            if len(sentence.text.split()) >= 3:
                return turn, _cut(sentence.text)
    turn = transcript.turns[0]
    return turn, _cut(turn.content.strip()) or turn.content
