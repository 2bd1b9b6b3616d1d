"""Issue 27 items 6-9, the logic under the pages: the review date rule, reason length and form order,
the event log's free text, merges in a record's history, and the one time format."""

import pandas as pd
import pytest

from admin_ui.auth import Identity
from admin_ui.data import actions, logs
from admin_ui.data.dates import DATE_RULE, resolve_review_date
from admin_ui.data.grants import grant_form_problems
from admin_ui.data.records import event_rows
from admin_ui.views.timefmt import GRID_FORMAT, show_time
from admin_ui.views.widgets import _time_config
from memory_core.errors import InvalidInputError
from memory_core.service.admin_methods import LogFilter
from tests.helpers import write

REVIEWER = Identity("rita", "reviewer")
OPERATOR = Identity("omar", "operator")


# -- item 6: one rule for dates in figures --------------------------------------------------------


@pytest.mark.parametrize("text, says", [
    ("05/06/2026", "could be 5 June 2026 or 6 May 2026"),
    ("06.05.2026", "could be 6 May 2026 or 5 June 2026"),
    ("05-06-2026", "could be 5 June 2026 or 6 May 2026"),
    ("31/03/2026", "type 2026-03-31"),
    ("05/05/2026", "type 2026-05-05"),
    ("2026-02-30", "is not a real date"),
    ("13/13/2026", "not a date in the YYYY-MM-DD form"),
    ("2026/05/01", "not a date in the YYYY-MM-DD form"),
    ("1/2/26", "not a date in the YYYY-MM-DD form"),
])
def test_a_date_in_figures_other_than_iso_is_refused_never_guessed(service, text, says):
    with pytest.raises(InvalidInputError, match=says):
        resolve_review_date(service, text)


def test_iso_days_and_words_still_resolve_and_the_rule_names_both(service):
    now = service.clock.now()
    year = now.year + 1
    assert resolve_review_date(service, f"{year}-06-05").iso.startswith(f"{year}-06-05T00:00:00")
    assert resolve_review_date(service, "next week").moment > now
    assert "YYYY-MM-DD" in DATE_RULE and "next week" in DATE_RULE and "UTC" in DATE_RULE


def test_an_ambiguous_date_changes_nothing(service, alice):
    rid = write(alice, "The user likes tea.", attribute="drink")
    service.store.conn.execute("UPDATE records SET review_flagged_at = ?, review_reason = 'due' WHERE id = ?",
                               ("2026-03-05T09:00:00Z", rid))
    with pytest.raises(InvalidInputError, match="could be"):
        actions.clear_review_flag(service, REVIEWER, rid, "checked", "05/06/2030")
    assert service.record(rid).review_flagged_at is not None


def test_a_past_date_is_refused_in_the_boxs_own_form(service):
    with pytest.raises(InvalidInputError, match=r"'2020-01-01' is 2020-01-01 00:00 UTC, and now is \d{4}-\d\d-\d\d \d\d:\d\d UTC"):
        resolve_review_date(service, "2020-01-01")


# -- item 7: reasons and the order of a form's messages --------------------------------------------


def test_a_reason_over_the_limit_is_refused_with_its_length_and_the_limit():
    assert actions.reason_problem("x" * actions.REASON_LIMIT) is None
    problem = actions.reason_problem("x" * 1500)
    assert problem.startswith("The reason is 1,500 characters long; the limit is 1,000.")
    assert actions.reason_problem("   ").startswith("Give a reason")
    with pytest.raises(InvalidInputError, match="the limit is 1,000"):
        actions.require_reason("y" * 1001)


def test_a_too_long_reason_changes_nothing(service):
    before = service.grants()
    with pytest.raises(InvalidInputError, match="1,001 characters"):
        actions.add_grant(service, OPERATOR, "scheduler", "user:alice", True, False, "z" * 1001)
    assert service.grants() == before


def test_the_grant_form_names_its_fields_in_order():
    assert [bool(p) for p in grant_form_problems("", "")] == [True, True]
    assert grant_form_problems("", "")[0].startswith("Give the agent id")
    assert grant_form_problems("scheduler", " ")[0] is None and grant_form_problems("scheduler", " ")[1].startswith("Give the scope")
    assert grant_form_problems("scheduler", "user:alice") == [None, None]


# -- item 8: the event log's text, and merges in a record's history ----------------------------------


def _merged(service, alice):
    kept = write(alice, "Priya Rao plays the cello.", about="Priya Rao", about_kind="person", attribute="instrument")
    moved = write(alice, "Dr. Rao lives in Porto.", about="Dr. Rao", about_kind="person", attribute="home")
    source = next(link["entity_id"] for link in service.record(moved).entity_links if link["role"] == "subject")
    target = next(link["entity_id"] for link in service.record(kept).entity_links if link["role"] == "subject")
    assert source != target
    actions.merge_entities(service, OPERATOR, source, target, "same person, two names")
    return kept, moved, source, target


def test_the_event_logs_text_matches_kind_actor_ids_and_reason(service, alice):
    kept, moved, source, target = _merged(service, alice)

    def kinds(text):
        return {row["kind"] for row in logs.event_log(service, LogFilter(text=text), 1, 500).items}

    assert "entity.merged" in kinds("merge")  # the kind (the reason says "same person")
    assert "entity.merged" in kinds("ui:omar")  # the actor
    assert "entity.merged" in kinds(target)  # the entity id
    assert kinds(moved) >= {"record.created"}  # a record id
    assert kinds("two names") == {"entity.merged"}  # the reason
    assert kinds("50%_off") == set()  # LIKE's own characters are literal


def test_a_records_history_shows_the_merge_that_rewrote_its_subject(service, alice):
    kept, moved, source, target = _merged(service, alice)
    history = event_rows(service, moved)
    merged = [row for row in history if row["kind"] == "entity.merged"]
    assert len(merged) == 1 and merged[0]["detail"] == f"entity {source} merged into {target}"
    assert merged[0]["reason"] == "same person, two names"
    assert [row["seq"] for row in history] == sorted(row["seq"] for row in history)
    assert history[0]["kind"] == "record.created" and history[0]["detail"] == ""
    other = write(alice, "The user likes tea.", attribute="drink")
    assert not [row for row in event_rows(service, other) if row["kind"] == "entity.merged"]


# -- item 9: one time format -----------------------------------------------------------------------


@pytest.mark.parametrize("value, shown", [
    ("2026-04-20T09:00:00.000000Z", "20 Apr 2026, 09:00:00 UTC"),
    ("2026-04-20T11:30:05+02:00", "20 Apr 2026, 09:30:05 UTC"),
    ("2026-04-20", "20 Apr 2026, 00:00:00 UTC"),
    ("0999-01-02T03:04:05Z", "2 Jan 0999, 03:04:05 UTC"),
    (None, "not yet"),
    ("", "not yet"),
    ("soon", "soon"),
])
def test_a_moment_reads_one_way_and_names_utc(value, shown):
    assert show_time(value) == shown


def test_grids_use_the_same_format_and_say_utc_in_the_header():
    frame = pd.DataFrame([{"id": "a", "created_at": "2026-04-20T09:00:00Z", "note": "x"}])
    _, config = _time_config(frame.copy(), {})
    assert set(config) == {"created_at"}
    column = config["created_at"]
    assert column["label"] == "created_at (UTC)"
    assert column["type_config"]["format"] == GRID_FORMAT and column["type_config"]["timezone"] == "UTC"
