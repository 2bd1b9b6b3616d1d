"""The claim comparison (memory_core/policy/claims.py): values, polarity and wording decide."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memory_core.policy.claims import compare_claims, extract_values, polarity

DIFFERENT = [
    ("The user's phone number is 555-0143.", "The user's phone number is 555-0199.", "identifier"),
    ("The user is on UTC+1.", "The user is on UTC+2.", "identifier"),
    ("The flight is on 2026-04-10.", "The flight is on 2026-04-12.", "date"),
    ("Stand-up is at 9:00.", "Stand-up is at 9:30.", "time"),
    ("Rent is $1,200.", "Rent is $1,450.", "amount"),
    ("The dose is 50 mg.", "The dose is 100 mg.", "amount"),
    ("Flight TP 1234.", "Flight TP 1290.", "identifier"),
    ("Server at 10.0.0.12.", "Server at 10.0.0.13.", "identifier"),
    ("The user lives in Berlin.", "The user lives in Hamburg.", "name"),
    ("The user loves jazz.", "The user hates jazz.", "polarity"),
    ("The user eats meat.", "The user does not eat meat.", "polarity"),
    ("The user prefers tea.", "The user prefers coffee.", "wording"),
    ("The user has two kids.", "The user has three kids.", "number"),
    ("Code word is zq1x0.", "Code word is zq0x0.", "identifier"),
]
SAME = [
    ("The user's phone number is 555-0143.", "The user's phone number is 555 0143."),
    ("Rent is $1,200.", "Rent is 1200 dollars."),
    ("The flight is on 2026-04-10.", "The flight is on April 10, 2026."),
    ("Stand-up at 9:00.", "Stand-up at 9 am."),
    ("Gym at 6 pm.", "Gym at 18:00."),
    ("The user has two kids.", "The user has 2 children."),
    ("The user lives in Berlin.", "The user is based in Berlin."),
    ("The user doesn't like long meetings.", "The user does not like long meetings."),
]


@pytest.mark.parametrize("old,new,kind", DIFFERENT)
def test_a_changed_value_is_a_different_claim(old, new, kind):
    comparison = compare_claims(new, old)
    assert not comparison.same
    assert any(d.startswith(kind) for d in comparison.differences), comparison.differences


@pytest.mark.parametrize("old,new", SAME)
def test_a_restatement_is_the_same_claim(old, new):
    assert compare_claims(new, old).same, compare_claims(new, old).differences


def test_a_value_on_one_side_only_is_a_difference():
    assert not compare_claims("The user lives in Berlin, Germany.", "The user lives in Berlin.").same
    assert not compare_claims("The user's rent is $1,200.", "The user's rent is high.").same


def test_words_of_the_attribute_are_not_a_change_of_wording():
    old, new = "The user's passport expiry is 2031-05-14.", "The user's passport runs out on 14 May 2031."
    assert not compare_claims(new, old).same
    assert compare_claims(new, old, {"passport", "expiry"}).same


def test_values_are_normalised():
    values = {(v.kind, v.norm) for v in extract_values("Pay €52,000 by 3 March 2026 at 6:30 pm to alice@example.com, call +1 555 0143.")}
    assert ("amount", "EUR 52000") in values and ("date", "2026-03-03") in values and ("time", "18:30") in values
    assert ("identifier", "alice@example.com") in values and ("identifier", "+15550143") in values


def test_polarity_reads_negation_and_sentiment():
    assert polarity("The user likes jazz.") == 1 and polarity("The user hates jazz.") == -1
    assert polarity("The user doesn't like jazz.") == -1 and polarity("The user doesn't hate jazz.") == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_the_same_claim_as_itself_and_never_crashes(text):
    assert compare_claims(text, text).same
    extract_values(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40),
       st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=10**9))
def test_fuzzed_numbers_differ_exactly_when_they_differ(word, a, b):
    old, new = f"The {word} value is {a}.", f"The {word} value is {b}."
    comparison = compare_claims(new, old)
    if a != b and str(a) not in word and str(b) not in word:
        assert not comparison.same
    if a == b:
        assert comparison.same
