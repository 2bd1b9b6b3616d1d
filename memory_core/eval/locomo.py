"""The LoCoMo dataset as plain objects: conversations, dated turns and evidence-labelled questions.

The file is read where it lives (``../shared/data/locomo/locomo10.json`` next to the repository,
or ``$MEMORY_LOCOMO_PATH``) and is never copied into the repository: its licence (CC BY-NC 4.0)
travels with it. Evidence ids in the file are slightly irregular (``"D8:6; D9:17"``, ``"D:11:26"``,
``"D30:05"``); :func:`normalise_evidence` repairs what can be repaired and reports the rest.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

ENV_VAR = "MEMORY_LOCOMO_PATH"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE_CATEGORIES = (1, 2, 3, 4)
_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One dialogue turn: ``dia_id`` like ``D3:7`` (session 3, turn 7)."""

    dia_id: str
    session: int
    speaker: str
    text: str
    image_caption: str | None
    at: datetime

    def content(self) -> str:
        """The text stored as the memory record: speaker, words, and a shared image's caption."""
        body = f"{self.speaker}: {self.text.strip()}"
        if self.image_caption:
            body += f" [shared an image: {self.image_caption.strip()}]"
        return body


@dataclass(frozen=True)
class Question:
    """A question with the ids of the turns that answer it."""

    conversation: str
    index: int
    text: str
    category: int
    evidence: tuple[str, ...]
    answer: str | None
    variant: str = ""  # "named": an off-topic question rewritten to name the asked store's speakers
    doubts: tuple[str, ...] = ()  # named only: why the asked memory might answer it after all (named_labels)

    @property
    def qid(self) -> str:
        return f"{self.conversation}#{self.index}" + (f"~{self.variant}" if self.variant else "")

    @property
    def answerable(self) -> bool:
        """Category 1–4 with at least one usable evidence id (what recall is measured on)."""
        return self.category in ANSWERABLE_CATEGORIES and bool(self.evidence)


@dataclass
class Conversation:
    """One LoCoMo sample: two speakers, dated sessions of turns, and questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    dropped_evidence: list[str] = field(default_factory=list)

    @property
    def sessions(self) -> dict[int, list[Turn]]:
        out: dict[int, list[Turn]] = {}
        for turn in self.turns:
            out.setdefault(turn.session, []).append(turn)
        return out

    @property
    def last_at(self) -> datetime:
        return max(t.at for t in self.turns)

    def answerable(self) -> list[Question]:
        return [q for q in self.questions if q.answerable]


def default_path() -> Path:
    """``$MEMORY_LOCOMO_PATH`` if set, else ``../shared/data/locomo/locomo10.json`` beside the repo."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    return repo.parent / "shared" / "data" / "locomo" / "locomo10.json"


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime (the dataset has no time zones)."""
    parsed = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    return parsed.replace(tzinfo=timezone.utc)


def normalise_evidence(raw: list[str], known: set[str]) -> tuple[list[str], list[str]]:
    """Split, repair and check evidence ids against the conversation's turns.

    Returns ``(ids, dropped)``: ids in first-seen order, and raw pieces that name no turn.
    """
    ids: list[str] = []
    dropped: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item).strip()):
            if not piece:
                continue
            match = _DIA_ID.match(piece)
            dia_id = f"D{match.group(1)}:{match.group(2)}" if match else piece
            if dia_id in known:
                if dia_id not in ids:
                    ids.append(dia_id)
            else:
                dropped.append(piece)
    return ids, dropped


def parse_conversation(sample: dict) -> Conversation:
    """One element of the LoCoMo list → :class:`Conversation`."""
    conv = sample["conversation"]
    turns: list[Turn] = []
    for key in sorted((k for k in conv if _SESSION_KEY.fullmatch(k)), key=lambda k: int(k.split("_")[1])):
        number = int(key.split("_")[1])
        at = parse_session_date(conv[f"{key}_date_time"])
        for item in conv[key] or []:
            turns.append(Turn(item["dia_id"], number, item["speaker"], item.get("text") or "", item.get("blip_caption"), at))
    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    dropped_all: list[str] = []
    for index, qa in enumerate(sample.get("qa", [])):
        evidence, dropped = normalise_evidence(qa.get("evidence") or [], known)
        dropped_all.extend(dropped)
        answer = qa.get("answer", qa.get("adversarial_answer"))
        questions.append(Question(sample["sample_id"], index, qa["question"], int(qa["category"]), tuple(evidence),
                                  None if answer is None else str(answer)))
    return Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), turns, questions, dropped_all)


def load_locomo(path: str | Path | None = None, *, limit: int | None = None) -> list[Conversation]:
    """Read the dataset (all ten conversations, or the first ``limit``)."""
    source = Path(path) if path else default_path()
    if not source.is_file():
        raise FileNotFoundError(
            f"LoCoMo not found at {source}; set ${ENV_VAR} to the locomo10.json file (it is not shipped with the repo)"
        )
    samples = json.loads(source.read_text(encoding="utf-8"))
    if limit is not None:
        samples = samples[:limit]
    return [parse_conversation(s) for s in samples]


def off_topic_partner(conversations: list[Conversation], index: int) -> Conversation:
    """The conversation whose questions are asked of ``conversations[index]``'s store as off-topic.

    The next conversation in order that shares no speaker name with it (the dataset reuses
    "John"), so the correct answer really is "nothing here".
    """
    own = {s.casefold() for s in conversations[index].speakers}
    count = len(conversations)
    for step in range(1, count):
        other = conversations[(index + step) % count]
        if not own & {s.casefold() for s in other.speakers}:
            return other
    raise ValueError("no conversation without shared speaker names to draw off-topic questions from")


def named_off_topic(conversations: list[Conversation], index: int) -> list[Question]:
    """Off-topic questions that name this conversation's own speakers (the hardest class for a gate).

    The off-topic partner's answerable questions with its speakers' names replaced by this
    conversation's (speaker a for a, b for b; whole names and first names): "What did Caroline
    research?" becomes "What did Jon research?" when asked of Jon and Gina's memory. The question
    names a known person, but asks about another life, so the right answer is (almost always)
    nothing. Only questions in which exactly one speaker was named are kept (a question about both
    speakers, "what do X and Y have in common?", is too often answerable by any pair); ``qid``
    carries a ``~named`` suffix. Each question's ``doubts`` say why its label might be wrong
    (:mod:`.named_labels`, which reads the dataset only); the *verified* set is those without any.
    """
    from . import named_labels

    own = conversations[index]
    partner = off_topic_partner(conversations, index)
    swaps: list[list[tuple[re.Pattern, str]]] = []
    for theirs, ours in zip(partner.speakers, own.speakers):
        swaps.append([(re.compile(rf"\b{re.escape(a)}\b"), b) for a, b in ((theirs, ours), (theirs.split()[0], ours.split()[0]))])
    windows, names = named_labels.turn_windows(own), named_labels.speaker_names(own, partner)
    out = []
    for q in partner.answerable():
        text, named = q.text, 0
        for speaker in swaps:
            before = text
            for pattern, name in speaker:
                text = pattern.sub(name, text)
            named += text != before
        if named == 1:
            named_q = Question(q.conversation, q.index, text, q.category, q.evidence, q.answer, variant="named")
            out.append(replace(named_q, doubts=named_labels.doubts(named_q, windows, names)))
    return out
