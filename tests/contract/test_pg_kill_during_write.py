"""A writer killed with SIGKILL in the middle of its transaction: nothing it wrote is visible, and
the write lock it held is released at once (the server ends its session), so other writers go on."""

import multiprocessing as mp
import os
import signal
import time

from memory_core import FixedClock, MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder
from tests.helpers import write

from .pg_workers import hold_write_lock


def test_a_killed_writer_leaves_nothing_and_blocks_no_one(new_target):
    url = new_target("postgresql")
    svc = MemoryService.open(url, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    try:
        svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
        ctx = mp.get_context("spawn")
        ready = ctx.Event()
        doomed = ctx.Process(target=hold_write_lock, args=(url, ready))
        doomed.start()
        assert ready.wait(120), "the writer never got its transaction open"
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.join(30)
        began = time.monotonic()
        rid = write(svc.start_session(agent_id="assistant", user_id="alice"), "The user likes oolong tea.", attribute="tea")
        assert time.monotonic() - began < 10  # not stuck behind the dead writer's lock
        assert svc.record(rid).content == "The user likes oolong tea."
        assert svc.store.scalar("SELECT COUNT(*) FROM events WHERE kind = 'half.written'") == 0
        assert svc.store.scalar("SELECT COUNT(*) FROM store_meta WHERE key = 'half.written'") == 0
    finally:
        svc.close()
