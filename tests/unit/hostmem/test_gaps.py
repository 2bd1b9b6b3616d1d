"""The offline gap rules: ordinary turns leave no gap; requests on a personal topic do, unless the
turn already states the value."""

import pytest

from memory_core.hostmem.gaps import OfflineGapFinder, has_stem, is_request

finder = OfflineGapFinder()


@pytest.mark.parametrize("turn", [
    "Hi there!", "Thanks, that dinner recipe worked really well.", "What is the capital of Australia?",
    "How do restaurants decide their menu prices?", "Explain how a hash map works.", "I had a long day today.",
    "", "   ", "ok", "Who won the 2010 football World Cup?",
])
def test_ordinary_turns_leave_no_gap(turn):
    gaps, reason = finder.find(turn, 3)
    assert gaps == [] and reason


@pytest.mark.parametrize("turn, topic", [
    ("Can you suggest something I could cook for dinner tonight?", "diet"),
    ("Book me a flight to Madrid next Tuesday.", "travel"),
    ("Help me write a function that parses a CSV file.", "code"),
    ("Any good coworking spaces near me?", "home"),
    ("Help me choose a new laptop to buy.", "purchase"),
])
def test_a_request_on_a_personal_topic_leaves_a_gap(turn, topic):
    gaps, _ = finder.find(turn, 3)
    assert topic in [g.topic for g in gaps]
    assert all("alice" not in g.query.casefold() for g in gaps), "gap queries ask about 'the user', never a guessed name"


@pytest.mark.parametrize("turn", [
    "Give me a vegan lasagne recipe.", "Write a Python function that reverses a string.",
    "Can you book a meeting with Sam tomorrow at 3 pm UTC?", "Send a formal email to the bank asking for my statement.",
])
def test_a_turn_that_states_the_value_leaves_no_gap_for_it(turn):
    gaps, reason = finder.find(turn, 3)
    assert not [g for g in gaps if g.topic != "possession"]
    assert "filled" in reason or not gaps


def test_a_possession_becomes_its_own_gap_and_gaps_are_bounded():
    gaps, _ = finder.find("What should I buy my sister for her birthday?", 3)
    assert gaps[0].query == "the user's sister" and gaps[0].focus == ("sister",)
    many, _ = finder.find("Plan dinner, a flight, a workout, code and an email for me near the office.", 2)
    assert len(many) == 2


def test_purchase_gaps_are_anchored_to_the_thing_bought():
    gaps, _ = finder.find("I want to buy a new phone, help me pick one.", 3)
    (gap,) = [g for g in gaps if g.topic == "purchase"]
    assert gap.anchor == "phone" and "phone" in gap.query


def test_stems_match_whole_words_when_short_or_marked():
    assert has_stem(["training"], ("train$",)) == []
    assert has_stem(["trains"], ("train",)) == ["train"]
    assert has_stem(["best"], ("est",)) == []
    assert has_stem(["how", "far", "is", "it"], ("how far",)) == ["how far"]


def test_request_detection():
    assert is_request("Could you plan my week?")
    assert is_request("Is there a good bakery nearby?")
    assert not is_request("Why do cats purr?")
    assert not is_request("The weather was lovely at the beach.")
