"""A write commits once: its write-log row, with the stage timings, is in the write's own transaction."""

from __future__ import annotations

import json

from tests.helpers import write


def _count_transactions(store, monkeypatch) -> list[str]:
    opened: list[str] = []
    for name in ("transaction", "batched_transaction"):
        original = getattr(store, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            opened.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    return opened


def test_a_write_and_its_log_row_are_one_transaction(alice, service, monkeypatch):
    session = alice
    write(session, "The user's bike is a green Brompton.", attribute="bike")  # the principal's entity exists now
    opened = _count_transactions(service.store, monkeypatch)

    result = session.call_tool("memory_write", {"type": "semantic", "content": "The user's tent is orange.", "attribute": "tent"})

    assert result["ok"], result
    assert len(opened) == 1, opened
    row = service.store.query_one("SELECT stages, total_ms FROM write_log WHERE record_id = ?", (result["record_id"],))
    stages = json.loads(row["stages"])
    assert stages["event_log_write"] >= 0 and row["total_ms"] >= sum(stages.values()) - 0.01


def test_a_reinforcement_is_one_transaction_too(alice, service, monkeypatch):
    session = alice
    write(session, "The user's bike is a green Brompton.", attribute="bike")
    opened = _count_transactions(service.store, monkeypatch)

    again = session.call_tool("memory_write", {"type": "semantic", "content": "The user's bike is a green Brompton.", "attribute": "bike"})

    assert again["outcome"] == "reinforced" and len(opened) == 1, opened
