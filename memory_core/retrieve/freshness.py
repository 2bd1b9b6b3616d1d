"""Freshness (weight 0.3 by default, for recency questions): episodic records lose part of their
fused score with age, for queries about the present, the recent past or the outcome of a decision
(``freshness_scope``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from ..clock import parse_ts
from ..settings import RetrievalSettings
from .recorder import StageRecorder
from .search_types import Candidate
from .services import SearchServices

# "last" asks for the newest ("what did we decide last", "the last time") unless it names a past
# period ("last week", "last summer": LoCoMo's 18 questions with "last" are all of that kind).
_PERIODS = (r"(?:week|weekend|month|year|night|evening|morning|afternoon|summer|winter|spring|autumn|fall|season|quarter|"
            r"semester|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
            r"august|september|october|november|december)s?")
RECENCY_WORDS = re.compile(
    r"\b(recent|recently|lately|latest|newest|currently|current|nowadays|these days|right now|now|at the moment|anymore|"
    r"still|today|this (?:week|month|year)|final|finally|in the end|settled? on|land(?:ed)? on|"
    rf"last(?!\s+{_PERIODS}\b))\b", re.IGNORECASE)
# Before issue 31 (kept for the measurement in benchmarks/ranking_sweep.py): without "last", "now",
# "at the moment" and the words that ask for the outcome of a decision (final, in the end, settle on, land on).
PREVIOUS_RECENCY_WORDS = re.compile(
    r"\b(recent|recently|lately|latest|newest|currently|current|nowadays|these days|right now|anymore|still|today|"
    r"this (?:week|month|year))\b", re.IGNORECASE)


def asks_about_recency(query: str) -> bool:
    """Does the query ask about the present, the recent past or the outcome of a decision ("what am I
    currently reading", "what did we decide last about the database")?"""
    return bool(RECENCY_WORDS.search(query))


def freshness_factor(age_days: float, half_life_days: float, weight: float) -> float:
    """Multiplier for an episodic record's fused score: ``(1 - w) + w * 0.5 ** (age / half_life)``.

    A record from the future (or now) gets 1.0; with ``weight`` 0 every record gets 1.0; the factor
    never drops below ``1 - weight``.
    """
    if half_life_days <= 0:
        raise ValueError("the half-life must be positive")
    weight = min(max(weight, 0.0), 1.0)
    age = max(age_days, 0.0)
    return (1.0 - weight) + weight * math.pow(0.5, age / half_life_days)


class FreshnessStage:
    """Scale episodic records' fused scores by recency (event time, else creation time) and re-sort."""

    name = "freshness"

    @dataclass(slots=True)
    class Inputs:
        settings: RetrievalSettings
        query: str
        now: datetime
        ranking: list[Candidate]

    @dataclass(slots=True)
    class Outputs:
        ranking: list[Candidate]

    def run(self, given: Inputs, rec: StageRecorder, deps: SearchServices) -> Outputs:
        s, ranking = given.settings, given.ranking
        recency = asks_about_recency(given.query)
        rec.io(inputs={"half_life_days": s.freshness_half_life_days, "weight": s.freshness_weight,
                       "scope": s.freshness_scope, "asks_about_recency": recency})
        if s.freshness_weight == 0:
            rec.skip("freshness_weight is 0")
            return self.Outputs(ranking)
        if s.freshness_scope == "recency_questions" and not recency:
            rec.skip("the query does not ask about the present or the recent past")
            return self.Outputs(ranking)
        adjusted = []
        for cand in ranking:
            if cand.type != "episodic":
                continue
            when = parse_ts(cand.event_at or cand.created_at)
            age = (given.now - when).total_seconds() / 86400.0
            factor = freshness_factor(age, s.freshness_half_life_days, s.freshness_weight)
            before = cand.score
            cand.score = before * factor
            cand.freshness = {"age_days": round(age, 3), "factor": round(factor, 6), "score_before": round(before, 8),
                              "score_after": round(cand.score, 8)}
            adjusted.append({"id": cand.record_id, **cand.freshness})
        ranking = sorted(ranking, key=lambda c: (-c.score, c.fused_rank))
        rec.io(outputs={"adjusted": adjusted, "order": [c.record_id for c in ranking]})
        return self.Outputs(ranking)
