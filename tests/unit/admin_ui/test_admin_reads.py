"""The service's admin reads (memory_core/store/admin_reads.py, admin_logs.py): what the app lists,
and the refusals for anything that would put a caller's text into SQL."""

import pytest

from admin_ui.data import logs, records
from memory_core import MemoryService
from memory_core.service.admin_methods import LogFilter, RecordFilter
from tests.fakes import HashingEmbedder
from tests.helpers import write


def test_a_records_list_reads_in_a_named_order_and_refuses_any_other(service, alice):
    first = write(alice, "The user likes tea.", attribute="drink")
    second = write(alice, "The user cycles to work.", attribute="commute")
    newest = service.browse_records(RecordFilter(), page=1, page_size=10)
    oldest = service.browse_records(RecordFilter(), page=1, page_size=10, order="oldest")
    assert {r.id for r in newest.rows} == {first, second} and [r.id for r in oldest.rows] == [r.id for r in newest.rows][::-1]
    before = service.stats()["records"]
    with pytest.raises(ValueError, match="order must be one of newest, oldest"):
        service.browse_records(RecordFilter(), order="r.id; DELETE FROM records")
    assert service.stats()["records"] == before == 2


def test_a_page_past_the_end_is_the_last_page(service, alice):
    for n in range(3):
        write(alice, f"The user owns {n + 2} bicycles.", attribute=f"bikes{n}")
    page = records.list_records(service, RecordFilter(), page=99, page_size=2)
    assert (page.page, page.total, len(page.items)) == (2, 3, 1)


def test_pickers_list_known_columns_only(service, alice):
    write(alice, "The user likes tea.", attribute="drink")
    assert records.distinct_values(service, "type") == ["semantic"]
    with pytest.raises(ValueError, match="no picker for records.content"):
        records.distinct_values(service, "content")


def test_a_log_entry_comes_from_one_of_the_three_logs_decoded(service, alice):
    rid = write(alice, "The user likes tea.", attribute="drink")
    service.search(agent_id="assistant", user_id="alice", query="tea")
    (searched,) = logs.search_log(service, LogFilter()).items
    entry = logs.log_entry(service, "search_log", searched["seq"])
    assert entry["id"] == searched["id"] and entry["result_ids"] == [rid] and isinstance(entry["request"], dict)
    event = logs.event_log(service, LogFilter(record_id=rid)).items[0]
    assert isinstance(logs.log_entry(service, "events", event["seq"])["payload"], dict)
    assert logs.log_entry(service, "write_log", 10 ** 9) is None
    with pytest.raises(ValueError, match="unknown log records"):
        logs.log_entry(service, "records", 1)


def test_a_sessions_host_decisions_are_a_list_when_the_store_keeps_them(service, alice):
    assert service.host_decisions(alice.id) == []
    assert service.session_searches(alice.id) == []


def test_a_demo_store_says_its_clock_before_it_is_opened(tmp_path, settings):
    path = tmp_path / "demo.sqlite"
    with MemoryService.open(path, settings, embedder=HashingEmbedder()) as svc:
        assert MemoryService.stored_demo_now(path) is None  # a store, not a demo
        svc.store.set_meta("demo_now", "2026-04-20T09:00:00.000000Z")
    assert MemoryService.stored_demo_now(path) == "2026-04-20T09:00:00.000000Z"
    assert MemoryService.stored_demo_now(str(path)) == "2026-04-20T09:00:00.000000Z"
    (tmp_path / "notes.txt").write_text("not a database\n")
    for target in (tmp_path / "missing.sqlite", tmp_path / "notes.txt", "postgresql://u@localhost/db", tmp_path):
        assert MemoryService.stored_demo_now(target) is None
