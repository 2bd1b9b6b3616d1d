"""``open_demo`` opens a scratch copy at the demo's pinned time and leaves the built store alone."""

import pytest

from pathlib import Path

from memory_core.clock import format_ts
from memory_core.notebook import default_demo_path, open_demo
from tests.fakes import HashingEmbedder


@pytest.mark.sqlite_only
def test_open_demo_works_on_a_scratch_copy_at_demo_now(hostile):
    source = Path(hostile.service.store.path)
    hostile.service.store.set_meta("demo_now", "2026-04-20T09:00:00.000000Z")
    before = hostile.service.stats()["records"]
    opened = open_demo(source, embedder=HashingEmbedder(), progress=None)
    try:
        assert Path(opened.store.path) != source and opened.stats()["records"] == before
        assert format_ts(opened.clock.now()) == "2026-04-20T09:00:00.000000Z"
        assert opened.settings.extraction.extractor == "offline"
        opened.extract_transcript(agent_id="assistant", user_id="alice", turns=[{"role": "user", "content": "I live in Lisbon."}])
        assert opened.stats()["records"] > before
    finally:
        opened.close()
    assert hostile.service.stats()["records"] == before  # the built store is untouched


@pytest.mark.sqlite_only
def test_without_scratch_the_store_itself_is_opened(hostile):
    source = Path(hostile.service.store.path)
    opened = open_demo(source, scratch=False, embedder=HashingEmbedder(), progress=None)
    try:
        assert Path(opened.store.path) == source
    finally:
        opened.close()


def test_the_default_demo_store_is_the_one_make_run_builds():
    assert default_demo_path().parts[-2:] == ("var", "demo.sqlite")
