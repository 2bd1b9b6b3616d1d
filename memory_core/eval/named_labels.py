"""How far to trust the label of a LoCoMo *named off-topic* question, checked without the retriever.

A named off-topic question is another conversation's question with its speaker's name swapped for
this conversation's ("What did Caroline research?" asked of Jon and Gina's memory becomes "What did
Jon research?", :func:`.locomo.named_off_topic`); its label says the memory holds no answer. All ten
LoCoMo conversations are chit-chat about hobbies, family and work, so some of these questions are
answerable here after all: the gold answer may hold for Jon too, or Jon may talk about the very
thing asked. A gate that lets such a question through is then right, and the raw correct-empty
rate understates it.

The check reads only the dataset (the asked conversation's turns, the question and its gold
answer), never a search, so it cannot favour our retriever. A question is *doubted* for any of:

- ``inference``: an open-domain question (category 3: "What might Jon's financial status be?"),
  which asks for a judgement that can be made about anyone the memory knows well;
- ``answer in a turn``: at least half of the gold answer's key terms occur in one *window* of the
  asked conversation (a turn and the turn before it in the same session: answers often come as a
  reply);
- ``question in a turn``: the question's key terms occur in one window (all of them when it has
  one or two, at least two thirds of them otherwise): the speaker talks about the very thing asked.

Key terms are the words of a text, lower-cased, without stop words, names of either conversation's
speakers, calendar words and numbers, and shorter than three letters; each is cut to its first five
letters, a crude stemmer ("researching" and "research" agree). The check is meant to be generous
with doubt: the *verified* set is what is left when every doubted question is taken out. Applied
to the answerable questions of each conversation's own memory (where the answer is there by
construction), it doubts 95 % of them (:func:`sensitivity`), so few answerable questions survive
into the verified set by chance. Both sets are reported; nothing is tuned on either.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..text import LETTERS_AND_DIGITS as _WORD, QUESTION_WORDS as _QUESTION_WORDS, STOP_WORDS, TIME_WORDS as _CALENDAR

# locomo.Conversation and locomo.Question; not imported, because locomo imports this module (no cycle,
# not even for type checking)
Conversation = Question = Any

STEM = 5  # letters kept of each key term
INFERENCE = "inference question (category 3: a judgement that can be made about anyone)"
ANSWER = "the gold answer's key terms occur in one turn of the asked conversation"
TOPIC = "the question's key terms occur in one turn of the asked conversation"


def key_terms(text: str, leave_out: Iterable[str] = (), *, question: bool = False) -> frozenset[str]:
    """The text's key terms (see the module docstring); ``leave_out`` are lower-cased names."""
    skip = set(leave_out)
    out = set()
    for word in _WORD.findall(text or ""):
        key = word.casefold()
        if (len(key) < 3 or key.isdigit() or key in STOP_WORDS or key in skip or key in _CALENDAR
                or (question and key in _QUESTION_WORDS)):
            continue
        out.add(key[:STEM])
    return frozenset(out)


def turn_windows(conv: Conversation) -> list[frozenset[str]]:
    """Per turn, the key terms of it and of the turn before it in the same session (with any shared
    image's caption)."""
    own = [key_terms(f"{t.text} {t.image_caption or ''}") for t in conv.turns]
    out = []
    for i, turn in enumerate(conv.turns):
        previous = own[i - 1] if i and conv.turns[i - 1].session == turn.session else frozenset()
        out.append(own[i] | previous)
    return out


def speaker_names(*conversations: Conversation) -> frozenset[str]:
    """Every word of the speakers' names, lower-cased."""
    return frozenset(w.casefold() for c in conversations for s in c.speakers for w in _WORD.findall(s))


def _in_one_window(terms: frozenset[str], windows: list[frozenset[str]], need: int) -> bool:
    return any(len(terms & w) >= need for w in windows)


def doubts(question: Question, windows: list[frozenset[str]], names: Iterable[str]) -> tuple[str, ...]:
    """Why the memory whose turns give ``windows`` might answer ``question`` after all (empty: no doubt)."""
    out = []
    if question.category == 3:
        out.append(INFERENCE)
    answer = key_terms(question.answer or "", names)
    if answer and _in_one_window(answer, windows, -(-len(answer) // 2)):
        out.append(ANSWER)
    asked = key_terms(question.text, names, question=True)
    if asked and _in_one_window(asked, windows, len(asked) if len(asked) <= 2 else -(-2 * len(asked) // 3)):
        out.append(TOPIC)
    return tuple(out)


def sensitivity(conversations: list[Conversation]) -> dict:
    """The check applied to each conversation's answerable questions against its own turns (where
    the answer is there by construction): the share it doubts, in all and per reason. A high share
    means few answerable questions hide in the verified named set."""
    total, doubted, per_reason = 0, 0, {INFERENCE: 0, ANSWER: 0, TOPIC: 0}
    for conv in conversations:
        windows, names = turn_windows(conv), speaker_names(conv)
        for q in conv.answerable():
            found = doubts(q, windows, names)
            total += 1
            doubted += bool(found)
            for reason in found:
                per_reason[reason] += 1
    return {"questions": total, "doubted": doubted, "share_doubted": doubted / total if total else float("nan"),
            "per_reason": per_reason}


def summary(questions: list[Question]) -> dict:
    """How many named questions the check keeps (verified) and doubts, in all and per reason."""
    per_reason: dict[str, int] = {}
    for q in questions:
        for reason in q.doubts:
            per_reason[reason] = per_reason.get(reason, 0) + 1
    kept = sum(not q.doubts for q in questions)
    return {"questions": len(questions), "verified": kept, "doubted": len(questions) - kept, "per_reason": per_reason}
