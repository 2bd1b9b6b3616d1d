import threading

from memory_core import MemoryService
from memory_core.maintenance import expire_provisional, flag_due_reviews
from tests.fakes import HashingEmbedder
from tests.helpers import write


def flag(service, batch=None):
    return flag_due_reviews(service.store, service.clock, batch or service.settings.extraction.maintenance_batch_size)


def expire(service):
    return expire_provisional(service.store, service.index, service.clock, service.settings.extraction.maintenance_batch_size)


def row(service, record_id):
    return dict(service.store.query_one("SELECT * FROM records WHERE id = ?", (record_id,)))


def events(service, kind):
    return [dict(r) for r in service.store.query("SELECT * FROM events WHERE kind = ? ORDER BY seq", (kind,))]


def test_a_due_record_is_flagged_once_with_a_reason_and_nothing_else_changes(service, alice, clock):
    record_id = write(alice, "The user is flying to Tokyo on 10 March.", review_at="2026-03-11T00:00:00Z")
    before = row(service, record_id)
    assert flag(service) == []
    clock.set("2026-03-11T00:00:00Z")
    assert flag(service) == [record_id]
    after = row(service, record_id)
    assert after["review_flagged_at"] == "2026-03-11T00:00:00.000000Z"
    assert "2026-03-11" in after["review_reason"] and "Nothing was changed" in after["review_reason"]
    for column in ("content", "status", "source_kind", "evidence", "confidence", "valid_until", "expires_at", "version"):
        assert after[column] == before[column]
    assert flag(service) == []
    due = events(service, "record.review_due")
    assert [e["record_id"] for e in due] == [record_id] and due[0]["reason"] == after["review_reason"]


def test_concurrent_workers_flag_a_due_record_once(service, alice, clock):
    ids = [write(alice, f"The user has appointment number {i} soon.", review_at="2026-03-06T00:00:00Z") for i in range(5)]
    clock.set("2026-03-07T00:00:00Z")
    other = MemoryService.open(service.store.path, service.settings, clock=clock, embedder=HashingEmbedder())
    barrier = threading.Barrier(2)
    flagged: list[list[str]] = []

    def work(svc):
        barrier.wait()
        flagged.append(flag(svc, 2))

    threads = [threading.Thread(target=work, args=(svc,)) for svc in (service, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    other.close()
    assert sorted(flagged[0] + flagged[1]) == sorted(ids)
    assert len(events(service, "record.review_due")) == 5


def test_superseded_and_unscheduled_records_are_not_flagged(service, alice, clock):
    alice.record_turn("user", "I'm in Lisbon until March. Now I'm in Porto.")
    old = write(alice, "The user is in Lisbon.", attribute="city", review_at="2026-03-06T00:00:00Z")
    write(alice, "The user is in Porto.", attribute="city")
    write(alice, "The user likes tea.")
    clock.set("2026-04-01T00:00:00Z")
    assert row(service, old)["status"] == "superseded"
    assert flag(service) == []


def test_a_cleared_flag_stays_cleared_until_a_new_review_date(service, alice, clock):
    record_id = write(alice, "The user starts the new job in March.", review_at="2026-03-06T00:00:00Z")
    clock.set("2026-03-07T00:00:00Z")
    flag(service)
    service.lifecycle.clear_review_flag(record_id, actor="reviewer:ops", reason="started as planned",
                                        next_review_at="2026-06-01T00:00:00Z")
    assert flag(service) == []
    clock.set("2026-06-02T00:00:00Z")
    assert flag(service) == [record_id]


def test_expiry_pass_expires_unreinforced_provisional_records_idempotently(service, alice, clock):
    inferred = write(alice, "The user probably likes jazz.")  # agent_inference: provisional, 30 days
    confirmed_turn = alice.record_turn("user", "I like tea.")
    confirmed = write(alice, "The user likes tea.", source_kind="user_statement", evidence="I like tea.")
    assert confirmed_turn == 0 and row(service, confirmed)["status"] == "confirmed"
    assert row(service, inferred)["expires_at"] == "2026-04-04T10:00:00.000000Z"
    clock.set("2026-04-04T09:59:59Z")
    assert expire(service) == []
    clock.set("2026-04-04T10:00:00Z")
    version = service.store.records_version()
    assert expire(service) == [inferred]
    assert service.store.records_version() > version  # the change feed tells every process's index
    assert row(service, inferred)["status"] == "expired" and row(service, confirmed)["status"] == "confirmed"
    assert expire(service) == []
    assert [e["record_id"] for e in events(service, "record.expired")] == [inferred]
    mask = service.index.mask(["user:alice"], ("provisional", "confirmed"))
    assert int(mask.sum()) == 1


def test_a_reinforced_provisional_record_outlives_its_first_expiry(service, alice, clock):
    record_id = write(alice, "The user probably likes jazz.")
    clock.advance(days=20)
    service.lifecycle.confirm(record_id, actor="agent:assistant", reason="mentioned jazz again", session_id=alice.id)
    clock.advance(days=15)  # 35 days after creation, 15 after the reinforcement
    assert expire(service) == []
    assert row(service, record_id)["status"] == "provisional"


def test_user_confirmation_promotes_at_once(service, alice):
    record_id = write(alice, "The user probably likes jazz.")
    service.lifecycle.confirm(record_id, actor="user:alice", reason="the user confirmed it", promote=True)
    after = row(service, record_id)
    assert after["status"] == "confirmed" and after["expires_at"] is None


def test_run_maintenance_reports_both_passes(service, alice, clock):
    inferred = write(alice, "The user probably likes jazz.", review_at="2026-03-10T00:00:00Z")
    alice.record_turn("user", "I fly to Oslo on 9 March.")
    stated = write(alice, "The user flies to Oslo on 9 March.", review_at="2026-03-10T00:00:00Z",
                   source_kind="user_statement", evidence="I fly to Oslo on 9 March.")
    clock.set("2026-05-01T00:00:00Z")
    report = service.run_maintenance()
    assert report["expired"] == [inferred]
    assert report["review_flagged"] == [stated]  # expiry runs first: an expired record is not flagged
