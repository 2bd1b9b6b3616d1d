"""Extracting a transcript in parts, so that no transcript the store accepts is too long to extract.

An extractor's reply is bounded: a model answers within its output token limit and is asked for at
most :data:`~.candidates.MAX_REPLY_CANDIDATES` candidates, and the runner keeps at most
``extraction.max_candidates`` from one reply. So the transcript is cut into *parts* of consecutive
turns of at most ``extraction.part_max_chars`` characters (a longer turn into windows, cut after a
sentence where possible), and each part is extracted on its own. A part whose reply holds more
candidates than that, or whose extractor says its reply did not fit (``ExternalServiceError`` of
kind ``output_too_large``, e.g. a model cut off at its token limit), is split in two and each half
is asked again, down to windows of :data:`MIN_SPLIT_CHARS`; only a part that small keeps the
first ``max_candidates`` and logs the rest as dropped.

Each part is a :class:`~.candidates.Transcript` holding only its turns (a window keeps its turn's
number and role and a slice of its text, so a verbatim quote from it is verbatim in the turn), with
``part`` saying which part it is. Evidence is then located, reviewed and validated against the
whole transcript, so a retraction or joke in the next part is still seen by the reviewer.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ExternalServiceError
from .candidates import ExtractionOutput, Transcript, Turn

MIN_SPLIT_CHARS = 200  # a window this short is not split again
TURN_OVERHEAD = 64  # the "[turn N | role | time]" line a model sees before each turn
MAX_LOGGED_SKIPS = 50
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


class PartFailed(Exception):
    """The extractor failed on one part; ``part`` says which, ``error`` is what it raised."""

    def __init__(self, part: str | None, error: Exception) -> None:
        super().__init__(f"{part}: {error}")
        self.part = part
        self.error = error


@dataclass(frozen=True)
class Part:
    """Consecutive turns (or windows of one long turn) extracted together."""

    turns: tuple[Turn, ...]
    window: tuple[int, int] | None = None  # character range of the one turn it slices

    @property
    def chars(self) -> int:
        return sum(len(t.content) + TURN_OVERHEAD for t in self.turns)

    def label(self, total_turns: int) -> str:
        first, last = self.turns[0].turn, self.turns[-1].turn
        if self.window is not None:
            return f"turn {first}, characters {self.window[0]}-{self.window[1]} of {total_turns} turns"
        return f"turns {first}-{last} of {total_turns}" if first != last else f"turn {first} of {total_turns}"

    def split(self) -> tuple[Part, Part] | None:
        """Two halves (by turns, or the one turn's text at a sentence), or None when too small."""
        if not self.turns:
            return None
        if len(self.turns) > 1:
            middle = len(self.turns) // 2
            return Part(self.turns[:middle]), Part(self.turns[middle:])
        turn = self.turns[0]
        if len(turn.content) < MIN_SPLIT_CHARS:
            return None
        cut = _cut_point(turn.content, len(turn.content) // 2, len(turn.content) // 4)
        start = self.window[0] if self.window is not None else 0
        halves = (turn.content[:cut], turn.content[cut:])
        return (Part((dataclasses.replace(turn, content=halves[0]),), (start, start + cut)),
                Part((dataclasses.replace(turn, content=halves[1]),), (start + cut, start + len(turn.content))))


def _cut_point(text: str, limit: int, floor: int) -> int:
    """Where to cut ``text`` at or before ``limit``: after a sentence, else at a space, else at ``limit``."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit) if m.end() > floor]
    if ends:
        return ends[-1]
    space = text.rfind(" ", floor, limit)
    return space + 1 if space > 0 else max(limit, 1)


def plan_parts(transcript: Transcript, max_chars: int) -> list[Part]:
    """The transcript as parts of at most ``max_chars`` (a longer turn becomes windows of one turn)."""
    parts: list[Part] = []
    current: list[Turn] = []
    size = 0
    for turn in transcript.turns:
        cost = len(turn.content) + TURN_OVERHEAD
        if cost > max_chars:
            if current:
                parts.append(Part(tuple(current)))
                current, size = [], 0
            parts.extend(_windows(turn, max_chars - TURN_OVERHEAD))
            continue
        if current and size + cost > max_chars:
            parts.append(Part(tuple(current)))
            current, size = [], 0
        current.append(turn)
        size += cost
    if current or not parts:
        parts.append(Part(tuple(current)))
    return parts


def _windows(turn: Turn, width: int) -> list[Part]:
    width = max(width, MIN_SPLIT_CHARS)
    out, start, text = [], 0, turn.content
    while start < len(text):
        end = len(text) if len(text) - start <= width else start + _cut_point(text[start:], width, width // 2)
        out.append(Part((dataclasses.replace(turn, content=text[start:end]),), (start, end)))
        start = end
    return out


def extract_in_parts(extractor, transcript: Transcript, *, max_chars: int, cap: int,
                     between: Callable[[], None] = lambda: None) -> tuple[ExtractionOutput, dict]:
    """Every part's candidates (in transcript order) and one info dict; raises :class:`PartFailed`.

    ``between`` runs after each extractor call (the runner renews its lease there). The summary is
    the extractor's when the transcript was read in one piece; otherwise None (the runner then writes
    the offline summary of the whole transcript, since a summary of one part would misstate the session).
    """
    total = len(transcript.turns)
    pending = deque(plan_parts(transcript, max_chars))
    planned = len(pending)
    done: list[tuple[Part, ExtractionOutput, dict, int]] = []
    splits = 0
    while pending:
        part = pending.popleft()
        whole = planned == 1 and not splits
        view = transcript if whole else dataclasses.replace(transcript, turns=list(part.turns), part=part.label(total))
        try:
            output, info = extractor.extract(view)
        except ExternalServiceError as exc:
            halves = part.split() if exc.details.get("kind") == "output_too_large" else None
            if halves is None:
                raise PartFailed(view.part, exc) from exc
            pending.extendleft(reversed(halves))
            splits += 1
            continue
        finally:
            between()
        if len(output.candidates) > cap:
            halves = part.split()
            if halves is not None:
                pending.extendleft(reversed(halves))
                splits += 1
                continue
        dropped = max(len(output.candidates) - cap, 0)
        done.append((part, output.model_copy(update={"candidates": output.candidates[:cap]}), info, dropped))
    candidates = [c for _, output, _, _ in done for c in output.candidates]
    dropped = sum(d for *_, d in done)
    if len(done) == 1:
        _, output, info, _ = done[0]
        info = {**info, **({"dropped_over_limit": dropped} if dropped else {})}
        return ExtractionOutput(candidates=candidates, summary=output.summary), info
    skipped = [s for _, _, info, _ in done for s in info.get("skipped", [])]
    info = {
        "parts": [{"part": part.label(total), "chars": part.chars, "candidates": len(output.candidates),
                   **({"dropped_over_limit": d} if d else {})} for part, output, _, d in done],
        "splits": splits, "part_max_chars": max_chars,
        "summary": "the transcript was read in parts, so the session summary is the offline summary of all of it",
    }
    if skipped or any("skipped_total" in i for _, _, i, _ in done):
        info["skipped"] = skipped[:MAX_LOGGED_SKIPS]
        info["skipped_total"] = sum(i.get("skipped_total", 0) for _, _, i, _ in done)
    model = next((i["model"] for _, _, i, _ in done if i.get("model")), None)
    if model:
        info["model"] = model
    if dropped:
        info["dropped_over_limit"] = dropped
    return ExtractionOutput(candidates=candidates, summary=None), info
