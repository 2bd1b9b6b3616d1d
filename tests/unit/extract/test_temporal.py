from datetime import datetime, timezone

from memory_core.extract.candidates import TemporalClaim
from memory_core.extract.temporal import annotate, check_claim, resolve

THURSDAY = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)  # 2026-03-05 is a Thursday


def test_next_tuesday_resolves_against_the_turn_timestamp():
    resolution = resolve("next Tuesday", THURSDAY)
    assert resolution.start == datetime(2026, 3, 10, tzinfo=timezone.utc)
    assert resolution.period == "day"


def test_review_at_is_the_end_of_the_planned_day():
    check = check_claim("review_at", TemporalClaim(expression="next Tuesday"), "I'm flying to Tokyo next Tuesday.", THURSDAY)
    assert check.accepted
    assert check.value == datetime(2026, 3, 11, tzinfo=timezone.utc)


def test_the_same_words_resolve_differently_in_a_later_turn():
    later = datetime(2026, 3, 11, 9, 0, tzinfo=timezone.utc)  # a Wednesday
    assert resolve("next Tuesday", later).start == datetime(2026, 3, 17, tzinfo=timezone.utc)


def test_expression_missing_from_the_supporting_turn_is_refused():
    check = check_claim("review_at", TemporalClaim(expression="next Tuesday", value="2026-03-10"), "I'm flying to Tokyo soon.", THURSDAY)
    assert not check.accepted
    assert "does not contain" in check.reason


def test_proposed_value_is_replaced_by_the_parsed_one():
    check = check_claim("review_at", TemporalClaim(expression="next Tuesday", value="2026-04-01"), "Flying next Tuesday.", THURSDAY)
    assert check.accepted and check.value == datetime(2026, 3, 11, tzinfo=timezone.utc)
    assert "replaced" in check.reason


def test_ambiguous_next_weekday_in_the_same_week_is_not_dated():
    check = check_claim("valid_until", TemporalClaim(expression="next Friday"), "Here until next Friday.", THURSDAY)
    assert not check.accepted
    assert "could mean" in check.reason


def test_an_ambiguous_next_weekday_is_reviewed_once_both_readings_are_over():
    check = check_claim("review_at", TemporalClaim(expression="next Friday"), "Dinner next Friday.", THURSDAY)
    assert check.accepted and check.value == datetime(2026, 3, 14, tzinfo=timezone.utc)  # the Friday after, once over
    assert "could mean 2026-03-06 or 2026-03-13" in check.reason
    assert annotate("The user has dinner next Friday.", [check]) == "The user has dinner next Friday (2026-03-06 or 2026-03-13)."


def test_unparseable_expression_is_refused():
    check = check_claim("valid_until", TemporalClaim(expression="whenever"), "I'm here whenever.", THURSDAY)
    assert not check.accepted


def test_month_and_since_ranges():
    april = check_claim("valid_from", TemporalClaim(expression="from April"), "Remote from April.", THURSDAY)
    assert april.value == datetime(2026, 4, 1, tzinfo=timezone.utc)
    since = check_claim("valid_from", TemporalClaim(expression="since January"), "Vegan since January.", THURSDAY)
    assert since.value == datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_a_plan_already_over_at_the_turn_is_not_dated():
    check = check_claim("review_at", TemporalClaim(expression="last Tuesday"), "I flew last Tuesday.", THURSDAY)
    assert not check.accepted


def test_annotate_puts_the_absolute_date_after_the_expression():
    check = check_claim("review_at", TemporalClaim(expression="next Tuesday"), "I'm flying next Tuesday.", THURSDAY)
    assert annotate("The user is flying to Tokyo next Tuesday.", [check]) == "The user is flying to Tokyo next Tuesday (2026-03-10)."
