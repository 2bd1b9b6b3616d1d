"""Several processes write and search one PostgreSQL store at once: no write is lost, the same
claim written concurrently is stored once, and each process's next search sees the others' writes."""

import multiprocessing as mp

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

from .pg_workers import CLAIMS, writer

WORKERS = 4
WRITES = 12


def test_concurrent_writer_processes_lose_nothing_and_see_each_other(new_target):
    url = new_target("postgresql")
    setup = MemoryService.open(url, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    for w in range(WORKERS):
        setup.grant(f"w{w}", "project:shared", read=True, write=True, actor="t")
    setup.close()

    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(url, w, WRITES, WORKERS, barrier, results)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    try:
        reports = [results.get(timeout=600) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    errors = [r for r in reports if "error" in r]
    assert not errors, errors

    check = MemoryService.open(url, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        written = {rid for r in reports for rid in r["written"]}
        assert len(written) == WORKERS * WRITES
        stored = {row[0] for row in check.store.query("SELECT id FROM records WHERE content LIKE 'Worker % logged codeword %'")}
        assert stored == written
        # the same claim, written by four processes at the same moment, is one record each time (the
        # write lock serialises the duplicate check and the insert; without it this finds duplicates)
        for claim in range(CLAIMS):
            assert len({r["same"][claim] for r in reports}) == 1, claim
            assert check.store.scalar("SELECT COUNT(*) FROM records WHERE content = ? AND status != 'deleted'",
                                      (f"The shared project's launch {claim} is on Monday.",)) == 1
        # every change went through the feed once, in order, with no gap
        versions = [row[0] for row in check.store.query("SELECT version FROM index_changes ORDER BY version")]
        assert versions == list(range(versions[0], versions[0] + len(versions)))
    finally:
        check.close()
    for r in reports:
        for other in range(WORKERS):
            assert any(f"w{other}x{WRITES - 1}" in text for text in r["seen"][other]), (r["worker"], other, r["seen"][other])
