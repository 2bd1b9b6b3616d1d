"""Which questions the freshness adjustment applies to (``freshness.asks_about_recency``)."""

import pytest

from memory_core.retrieve.freshness import PREVIOUS_RECENCY_WORDS, asks_about_recency

ASK_FOR_THE_NEWEST = [
    "What did we decide last about the Atlas database?",  # the issue's own example
    "When did we last meet Priya?",
    "What was the last thing we agreed on the roadmap?",
    "Which database is the backend using now?",
    "What's my running plan at the moment?",
    "What's our final decision on the payment provider?",
    "Which vendor did we pick in the end?",
    "What price did we settle on for the Pro plan?",
    "What did we land on for payments?",
    "What book is Jon currently reading?",
    "What did Melanie paint recently?",
    "Is the team still moving to the third floor?",
]
ABOUT_A_PAST_PERIOD_OR_NOTHING_IN_TIME = [
    "What did Melanie do last weekend?",  # LoCoMo's 18 questions with "last" all name a period
    "Where did John go on a road trip last year?",
    "What happened last summer?",
    "What did Maria cook last Friday?",
    "What did they decide in last March's review?",
    "Why did we pick MySQL for Atlas in the first place?",
    "How much does the Pro plan cost?",
    "I know the answer",  # "now" only as a word
    "What did the lastminute.com ad say?",
]


@pytest.mark.parametrize("query", ASK_FOR_THE_NEWEST)
def test_questions_about_what_holds_now_or_the_outcome_of_a_decision_get_freshness(query):
    assert asks_about_recency(query)


@pytest.mark.parametrize("query", ABOUT_A_PAST_PERIOD_OR_NOTHING_IN_TIME)
def test_questions_about_a_named_past_period_or_without_time_do_not(query):
    assert not asks_about_recency(query)


def test_the_previous_test_missed_the_issue_s_example():
    """The measured alternative (benchmarks/ranking_sweep.py): "decide last" was not a recency question."""
    assert not PREVIOUS_RECENCY_WORDS.search("What did we decide last about the Atlas database?")
    assert PREVIOUS_RECENCY_WORDS.search("What did Melanie paint recently?")
