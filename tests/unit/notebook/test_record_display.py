"""A record alone, and a record with its lineage (``service.show_record``)."""

import pytest

from memory_core.errors import NotFoundError
from memory_core.notebook import RecordView
from memory_core.notebook.record_display import ERASED, VERSION_COLUMNS

from .conftest import XSS, assert_safe


def test_a_record_shows_its_envelope_escaped(hostile):
    record = hostile.service.record(hostile.new_id)
    markup = record._repr_html_()
    assert_safe(markup)
    assert "&lt;img src=x onerror=alert(1)&gt; drinks coffee now" in markup and "user:alice" in markup
    frame = record.to_dataframe()
    assert list(frame.columns) == list(VERSION_COLUMNS) and frame.loc[0, "record_id"] == hostile.new_id


def test_the_lineage_view_shows_versions_supersession_entities_evidence_and_events(hostile):
    view = hostile.service.show_record(hostile.new_id)
    assert isinstance(view, RecordView)
    assert [v.id for v in view.versions] == [hostile.old_id, hostile.new_id]
    markup = view._repr_html_()
    assert_safe(markup)
    assert f"current version: {hostile.new_id}" in markup
    assert "superseded" in markup and "&lt;script&gt;alert(2)&lt;/script&gt; tea" in markup  # v1's text, escaped
    assert "entity links" in markup and "&lt;img src=x onerror=alert(1)&gt;" in markup  # the entity's name
    assert "◀ quote" in markup and "Correction: my manager" in markup  # the evidence turn
    assert "record.superseded" in markup or "record.created" in markup
    frame = view.to_dataframe()
    assert list(frame["record_id"]) == [hostile.old_id, hostile.new_id]
    assert list(frame["status"]) == ["superseded", "confirmed"]
    assert frame.loc[1, "supersedes_id"] == hostile.old_id and frame.loc[0, "superseded_by_id"] == hostile.new_id
    assert XSS in frame.loc[1, "content"]
    assert {"record.created"} <= set(view.events_dataframe()["kind"])


def test_viewing_an_old_version_marks_it_and_names_the_current_one(hostile):
    markup = RecordView(hostile.service, hostile.old_id)._repr_html_()
    assert f"▶ {hostile.old_id}" in markup and f"current version: {hostile.new_id}" in markup


def test_a_forgotten_record_shows_as_erased(hostile):
    hostile.service.lifecycle.forget(hostile.new_id, actor="test", reason="user asked")
    view = hostile.service.show_record(hostile.new_id)
    assert view.record.status == "deleted"
    assert ERASED in view._repr_html_()
    assert view.to_dataframe().loc[1, "content"] == ERASED


def test_an_unknown_record_fails_when_asked_for_not_when_displayed(hostile):
    with pytest.raises(NotFoundError):
        hostile.service.show_record("mem_missing")
