"""The races the write locks must prevent, each run by real processes on a real store.

PostgreSQL locks each owner scope a write decides on (docs/store.md, "Concurrent writers on
PostgreSQL"); SQLite's write lock is one for the file. Each test starts its writers at one barrier,
so the commands reach the server together; each finds the anomaly named in its docstring when the
scope lock is taken out (checked by hand: see the issue 26 report).
"""

import multiprocessing as mp
from contextlib import contextmanager

import pytest

from .pg_race_workers import open_service, race_worker

WORKERS = 6
ROUNDS = 4


@contextmanager
def workers(url, count: int = WORKERS):
    """``count`` worker processes on ``url``; yields ``run(commands) -> [outcome per worker]``."""
    setup = open_service(url)
    for w in range(count):
        setup.grant(f"w{w}", "project:shared", read=True, write=True, actor="t")
    setup.close()
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(count), ctx.Queue()
    queues = [ctx.Queue() for _ in range(count)]
    procs = [ctx.Process(target=race_worker, args=(url, w, queues[w], barrier, results)) for w in range(count)]
    for p in procs:
        p.start()

    def run(commands: list) -> list[dict]:
        for queue, command in zip(queues, commands):
            queue.put(command)
        outcomes: dict[int, dict] = {}
        for _ in range(count):
            worker, outcome = results.get(timeout=600)
            assert "error" not in outcome, (worker, outcome)
            outcomes[worker] = outcome
        return [outcomes[w] for w in range(count)]

    try:
        yield run
    finally:
        for queue in queues:
            queue.put(None)
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()


def write(content: str, **fields) -> tuple:
    return ("write", {"type": "semantic", "target": "current_project", "about": "shared", "about_kind": "project",
                      "content": content, **fields})


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_and_run(request, tmp_path_factory):
    """One store per backend and one set of worker processes on it, shared by this module's tests
    (starting six processes costs more than the races they run; each test uses its own records)."""
    from tests import pg_server

    with pg_server.store_targets(tmp_path_factory.mktemp("races")) as make:
        url = make(request.param)
        with workers(url) as run:
            yield url, run


def test_six_identical_claims_from_six_processes_are_stored_once(store_and_run):
    """Without the lock every writer's duplicate search misses the others' uncommitted inserts:
    several copies of the claim."""
    url, run = store_and_run
    for r in range(ROUNDS):
        content = f"The shared project's demo {r} is on Thursday."
        outcomes = run([write(content, attribute=f"demo_{r}")] * WORKERS)
        assert all(o["ok"] for o in outcomes), outcomes
        assert len({o["record_id"] for o in outcomes}) == 1, (r, outcomes)
    check = open_service(url)
    try:
        for r in range(ROUNDS):
            rows = check.store.query("SELECT id, observations FROM records WHERE content = ? AND status != 'deleted'",
                                     (f"The shared project's demo {r} is on Thursday.",))
            assert len(rows) == 1, (r, [dict(x) for x in rows])
    finally:
        check.close()


def test_concurrent_supersession_of_one_subject_keeps_one_lineage(store_and_run):
    """Without the lock several writers supersede the same record: it gets two successors and the
    subject two live values that know nothing of each other."""
    url, run = store_and_run
    for r in range(ROUNDS):
        run([write(f"The shared project's venue {r} is Hall zero.", attribute=f"venue_{r}")] + [("noop",)] * (WORKERS - 1))
        outcomes = run([write(f"The shared project's venue {r} is Hall {w + 1}.", attribute=f"venue_{r}")
                        for w in range(WORKERS)])
        assert all(o["ok"] for o in outcomes), outcomes
    check = open_service(url)
    try:
        twice = check.store.query("SELECT supersedes_id, COUNT(*) AS n FROM records WHERE supersedes_id IS NOT NULL "
                                  "GROUP BY supersedes_id HAVING COUNT(*) > 1")
        assert twice == [], [dict(x) for x in twice]
        for r in range(ROUNDS):
            live = check.store.query("SELECT id, conflicts_with FROM records WHERE attribute = ? "
                                     "AND status IN ('provisional', 'confirmed')", (f"venue_{r}",))
            unaware = [x["id"] for x in live if x["conflicts_with"] in (None, "", "[]")]
            assert len(unaware) <= 1, (r, [dict(x) for x in live])  # one current value, or values marked in conflict
            for row in check.store.query("SELECT id, superseded_by_id FROM records WHERE attribute = ? AND status = 'superseded'",
                                         (f"venue_{r}",)):
                successor = check.store.query_one("SELECT supersedes_id FROM records WHERE id = ?", (row["superseded_by_id"],))
                assert successor is not None and successor["supersedes_id"] == row["id"], dict(row)
    finally:
        check.close()


def test_a_merge_racing_writes_leaves_no_link_to_the_merged_entity(store_and_run):
    """Without the lock a writer resolves the source entity, the merge relinks what it finds and
    commits, and the writer's record then links the merged entity."""
    url, run = store_and_run
    for r in range(ROUNDS):
        run([write(f"Kim{r} Varga reviews the shared project's budget {r}.", mentions=[f"Kim{r}"], attribute=f"budget_{r}"),
             write(f"Kimberly{r} Varga signs the shared project's contract {r}.", mentions=[f"Kimberly{r}"],
                   attribute=f"contract_{r}")] + [write(f"Filler note {r} {w}.", attribute=f"filler_{r}_{w}")
                                                  for w in range(2, WORKERS)])
        check = open_service(url)
        try:
            source = check.store.scalar("SELECT id FROM entities WHERE canonical_name = ?", (f"Kim{r}",))
            target = check.store.scalar("SELECT id FROM entities WHERE canonical_name = ?", (f"Kimberly{r}",))
        finally:
            check.close()
        assert source and target
        outcomes = run([("merge", source, target)] + [
            write(f"Kim{r} met the shared project's auditor on day {w}.", mentions=[f"Kim{r}"], attribute=f"audit_{r}_{w}")
            for w in range(1, WORKERS)])
        assert all(o["ok"] for o in outcomes), outcomes
    check = open_service(url)
    try:
        stale = check.store.query("SELECT re.record_id, re.entity_id FROM record_entities re JOIN entities e ON e.id = re.entity_id "
                                  "WHERE e.status = 'merged'")
        assert stale == [], [dict(x) for x in stale]
        subjects = check.store.query("SELECT r.id FROM records r JOIN entities e ON e.id = r.subject_entity_id "
                                     "WHERE e.status = 'merged'")
        assert subjects == [], [dict(x) for x in subjects]
    finally:
        check.close()


def test_a_forget_racing_reinforcements_is_never_undone(store_and_run):
    """Without the lock a writer finds the record live, the forget tombstones it, and the writer's
    reinforcement then lands on the tombstone: a forgotten record reinforced after its forget."""
    url, run = store_and_run
    for r in range(ROUNDS):
        content = f"The shared project's locker code {r} is kept by the porter."
        first = run([write(content, attribute=f"locker_{r}")] * WORKERS)
        record_id = first[0]["record_id"]
        outcomes = run([("forget", record_id)] + [write(content, attribute=f"locker_{r}")] * (WORKERS - 1))
        assert all(o["ok"] for o in outcomes), outcomes
    check = open_service(url)
    try:
        rows = check.store.query("SELECT id, content, status FROM records WHERE attribute IS NULL AND status = 'deleted'")
        assert rows and all(x["content"] == "" for x in rows)
        late = check.store.query(
            "SELECT e.record_id, e.kind FROM events e JOIN events f ON f.record_id = e.record_id AND f.kind = 'record.forgotten' "
            "WHERE e.kind IN ('record.reinforced', 'record.promoted', 'record.created', 'record.superseded') AND e.seq > f.seq")
        assert late == [], [dict(x) for x in late]
    finally:
        check.close()


def _lock_waiters(store) -> int:
    return int(store.scalar("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))


def test_a_writer_of_another_scope_never_waits_and_one_of_the_same_scope_does(new_target):
    """PostgreSQL: while a transaction holds user:alice's lock, a write to user:bob commits; a write
    to user:alice waits for it (seen in pg_locks), then commits once it ends."""
    import threading

    from memory_core.store.backend import open_store

    url = new_target("postgresql")
    svc = open_service(url)
    holder = open_store(url, "2026-03-05T10:00:00Z")
    try:
        for user in ("alice", "bob"):
            svc.grant(f"agent_{user}", f"user:{user}", read=True, write=True, actor="t")
        sessions = {u: svc.start_session(agent_id=f"agent_{u}", user_id=u) for u in ("alice", "bob")}
        done: dict[str, dict] = {}

        def write_for(user: str) -> None:
            done[user] = sessions[user].call_tool("memory_write", {"type": "episodic", "target": "personal",
                                                                   "content": f"{user} filed the quarterly report."})

        with holder.transaction({"user:alice"}):
            holder.scalar("SELECT 1")  # the locks go to the server with the transaction's first statement
            bob = threading.Thread(target=write_for, args=("bob",))
            bob.start()
            bob.join(timeout=300)
            assert not bob.is_alive() and done["bob"]["ok"], done  # committed while alice's scope is held
            alice = threading.Thread(target=write_for, args=("alice",))
            alice.start()
            while _lock_waiters(holder) == 0:  # the server shows the write queued on alice's lock
                assert alice.is_alive() and "alice" not in done, done
                threading.Event().wait(0.01)
            assert "alice" not in done
        alice.join(timeout=300)
        assert done["alice"]["ok"], done
    finally:
        holder.close()
        svc.close()
