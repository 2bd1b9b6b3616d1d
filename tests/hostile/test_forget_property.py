"""Property: whatever words a memory holds (any script, any case), after forgetting it no byte of
them is left in the db, WAL or SHM files — transcript, logs and FTS pages included."""

from __future__ import annotations

import pytest

import json
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.store.db import loads
from tests.fakes import HashingEmbedder

letters = st.characters(whitelist_categories=("Lu", "Ll"), min_codepoint=0x41, max_codepoint=0x24F)
markers = st.text(letters, min_size=9, max_size=14).filter(lambda w: w.isalpha() and len(w.casefold()) == len(w))


def file_bytes(path: Path) -> bytes:
    return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm") if Path(str(path) + s).exists())


def forms(word: str) -> set[bytes]:
    """The marker as a user wrote it, lower-cased, and as FTS5 stores it (folded, no diacritics)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c))
    return {f.encode() for f in (word, word.casefold(), word.lower(), plain) if len(f) >= 6}


@pytest.mark.sqlite_only
@hsettings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(marker=markers, shout=st.booleans(), search_first=st.booleans())
def test_no_byte_of_a_forgotten_memory_survives(marker, shout, search_first):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.sqlite"
        service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
        try:
            service.grant("assistant", "user:alice", read=True, write=True, actor="t")
            session = service.start_session(agent_id="assistant", user_id="alice")
            session.call_tool("memory_search", {"query": "warm up"})  # a logged search's own words (stage names...)
            # and those of a search that returns something (e.g. "truncated", a result's field name)
            session.call_tool("memory_write", {"type": "semantic", "attribute": "drink", "content": "The user drinks oolong."})
            session.call_tool("memory_search", {"query": "oolong drink"})
            # schema and log words (e.g. "candidate") are not the memory's; nor are the field names of a
            # search trace, which zlib may or may not leave as literal bytes in the file
            traces = [loads(row[0]) for row in service.store.query("SELECT trace FROM search_log")]
            baseline = file_bytes(path).lower() + json.dumps(traces).lower().encode()
            said = f"My locker password is {marker.upper() if shout else marker} today."
            session.record_turn("user", said)
            session.record_turn("user", "Also, I like tea.")
            made = session.call_tool("memory_write", {
                "type": "semantic", "attribute": "locker_password", "source_kind": "user_statement",
                "content": f"The user's locker password is {marker}.", "evidence": said[: -len(" today.")],
                "about": marker, "about_kind": "other", "tags": [marker[:20]]})
            assert made["ok"], made
            if search_first:
                # as extraction looks related records up: with the memory's own words
                session.call_tool("memory_search", {"query": f"The user's locker password is {marker}."})
            done = session.call_tool("memory_forget", {"record_id": made["record_id"], "reason": "asked"})
            assert done["ok"], done
            data = file_bytes(path)
            leftovers = [f for f in forms(marker) if (f in data or f in data.lower()) and f.lower() not in baseline]
            assert not leftovers, (marker, leftovers)
            assert "Also, I like tea." in [t["content"] for t in service.transcript(session.id)]
        finally:
            service.close()
