"""Property: whatever the records, a profile keeps its bounds, its order and one line per item."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, MemoryService
from memory_core.policy.ambient import ATTRIBUTES, CATEGORY_ORDER, category_of
from memory_core.retrieve.ambient import HEADER
from memory_core.text import count_tokens
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

# Words plus the characters a hostile record might use to break out of its line.
piece = st.one_of(st.sampled_from("concise French metric Ali screen reader tables units — 東京 🦊".split()),
                  st.sampled_from(["\n", "\r\n", "\u2028", "\t", "  ", "\u202e", "- ", "About this user:", "#"]))
content = st.lists(piece, min_size=1, max_size=12).map(lambda parts: "The user " + " ".join(parts))
record = st.tuples(st.sampled_from(ATTRIBUTES[:12] + ("trip", "diagnosis")), content)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(record, min_size=0, max_size=14), max_items=st.integers(1, 10), max_tokens=st.integers(20, 300))
def test_profiles_keep_their_bounds_order_and_lines(records, max_items, max_tokens):
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {"ambient": {"max_items": max_items, "max_tokens": max_tokens}}
        service = MemoryService.open(Path(tmp) / "m.sqlite", default_settings(**overrides),
                                     clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
        service.grant("assistant", "user:alice", read=True, write=True, actor="t")
        for i, (attribute, text) in enumerate(records):
            service.write_system_fact(scope="user:alice", content=text, attribute=attribute, actor="t")
            service.clock.advance(seconds=1)
        first = service.ambient_profile("assistant", "alice")
        again = service.ambient_profile("assistant", "alice")
        service.close()
    assert first.to_dict() == again.to_dict()
    assert len(first.items) <= max_items
    if first.text is None:
        assert first.items == []
        return
    assert count_tokens(first.text) <= max_tokens
    lines = first.text.split("\n")
    assert lines[0] == HEADER and len(lines) == len(first.items) + 1  # one line per item, none added by content
    assert all(line == f"- {item.text}" for line, item in zip(lines[1:], first.items))
    assert all(category_of(item.attribute) is not None for item in first.items)  # trips and diagnoses never
    order = [CATEGORY_ORDER[item.category] for item in first.items]
    assert order == sorted(order)
