"""The hand-labelled named off-topic questions (``tests/data/named_off_topic.json``): load, check, ask.

Each question names someone (or a project, an organisation) the asked memory knows and asks about
something it never stored: "What is Alice's blood type?". The right answer is empty, with a reason.
Absence was established by reading and is checked again here, by words: no record the principal
can read (in any status) and no turn of the LoCoMo conversation may contain an ``absent`` word or
phrase (whole words, case-insensitive). A case that fails the check is reported, never asked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..store.harness_queries import contents_in_scopes

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "named_off_topic.json"


@dataclass(frozen=True)
class NamedCase:
    """One hand-labelled question: who asks (demo) or which conversation (LoCoMo), and what must be absent."""

    query: str
    absent: tuple[str, ...]
    agent: str = ""
    user: str = ""
    conversation: str = ""
    reason_mentions: tuple[str, ...] = ()
    known_miss: bool = False


@dataclass
class NamedOutcome:
    """What a search gave for one case."""

    case: NamedCase
    empty: bool
    reason: str | None
    results: int
    problems: list[str] = field(default_factory=list)  # why the label could not be checked

    @property
    def correct(self) -> bool:
        return self.empty and not self.problems


def load(path: Path = FIXTURE) -> dict[str, list[NamedCase]]:
    """The demo and LoCoMo cases of the fixture file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: dict[str, list[NamedCase]] = {}
    for part in ("demo", "locomo"):
        out[part] = [NamedCase(item["query"], tuple(item["absent"]), item.get("agent", ""), item.get("user", ""),
                               item.get("conversation", ""), tuple(item.get("reason_mentions", ())), bool(item.get("known_miss")))
                     for item in data.get(part, [])]
    return out


def present_words(case: NamedCase, texts: list[str]) -> list[str]:
    """The case's ``absent`` words or phrases that some text contains (whole words); [] when the label holds."""
    found = []
    for phrase in case.absent:
        pattern = re.compile(rf"(?<![^\W_]){re.escape(phrase)}(?![^\W_])", re.IGNORECASE)
        if any(pattern.search(t or "") for t in texts):
            found.append(phrase)
    return found


def readable_texts(service, agent: str, user: str) -> list[str]:
    """Every record text the principal may read, whatever its status (deleted records have none)."""
    return contents_in_scopes(service.store, list(service.access(agent, user).readable_keys))


def ask(service, case: NamedCase, agent: str, user: str, texts: list[str]) -> NamedOutcome:
    """Check the case's label against ``texts``, then search (through the service, shipped settings)."""
    problems = [f"the memory holds {word!r}" for word in present_words(case, texts)]
    response = service.search(agent_id=agent, user_id=user, query=case.query)
    return NamedOutcome(case, response.empty, response.empty_reason, len(response.results), problems)


def summary(outcomes: list[NamedOutcome]) -> dict:
    """Correct-empty over the cases whose label checked out, and every case's answer."""
    checked = [o for o in outcomes if not o.problems]
    return {"cases": len(outcomes), "checked": len(checked),
            "correct_empty": sum(o.empty for o in checked) / len(checked) if checked else float("nan"),
            "answers": [{"query": o.case.query, "who": o.case.conversation or f"{o.case.agent}/{o.case.user}", "empty": o.empty,
                         "results": o.results, "reason": o.reason, "problems": o.problems} for o in outcomes]}


def ask_locomo(service, conversations, reader: str, cases: list[NamedCase] | None = None) -> dict:
    """The LoCoMo cases, each checked against its conversation's turns and asked of that conversation's
    memory by ``reader`` (the benchmark's agent with a read grant), with the shipped settings."""
    by_id = {c.sample_id: c for c in conversations}
    outcomes = []
    for case in cases if cases is not None else load()["locomo"]:
        conv = by_id.get(case.conversation)
        if conv is None:
            continue  # a partial run (--limit)
        texts = [f"{t.text} {t.image_caption or ''}" for t in conv.turns]
        outcomes.append(ask(service, case, reader, conv.sample_id, texts))
    return summary(outcomes)
