"""Differential test (issue 12, defect 7): nothing a principal sees depends on records it cannot read.

Two stores are built that differ only in records of another user, which the searching principal
has no grant on. Every search of the principal must then give the same results in the same order,
the same scores, and the same explanations and trace outputs (record ids, which are random per
store, are mapped to the records' contents before comparing; timings and search ids are left out).
"""

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, MemoryService, load_settings
from tests.fakes import HashingEmbedder

VOCAB = ("divorce lawyer garden tulips coffee Lisbon Porto Priya migration budget release checklist tea jazz "
         "marathon hiking Alps dentist penicillin allergy sushi Atlas Beacon interview survey").split()
_ID = re.compile(r"\b(?:mem|ent)_[0-9a-f]{16}\b")

sentence = st.lists(st.sampled_from(VOCAB), min_size=2, max_size=6).map(lambda ws: "Note: " + " ".join(ws) + ".")


def _build(path: Path, mine: list[str], theirs: list[str], interleave: bool) -> MemoryService:
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("other", "user:bob", read=True, write=True, actor="t")
    alice = service.start_session(agent_id="assistant", user_id="alice")
    bob = service.start_session(agent_id="other", user_id="bob")

    def write(session, i, text):
        reply = session.call_tool("memory_write", {"type": "semantic", "content": text, "attribute": f"a{i}",
                                                   "mentions": [w for w in text.split() if w[:1].isupper() and w != "Note:"][:2]})
        assert reply["ok"], reply

    pending = list(enumerate(theirs)) if interleave else []
    for i, text in enumerate(mine):
        write(alice, i, text)
        if pending:
            write(bob, *pending.pop(0))
    for item in pending:
        write(bob, *item)
    return service


def _view(service: MemoryService, query: str) -> dict:
    """What the principal sees of one search, with record ids replaced by the records' contents."""
    response = service.search(agent_id="assistant", user_id="alice", query=query)
    contents = {r["id"]: r["content"] for r in service.store.query("SELECT id, content FROM records")}
    entities = {r["id"]: r["canonical_name"] for r in service.store.query("SELECT id, canonical_name FROM entities")}

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items() if k not in ("ms", "search_id", "total_ms", "index_changes_applied", "embedding_ms", "waited_ms")}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, str):
            return _ID.sub(lambda m: f"<{contents.get(m.group(0)) or entities.get(m.group(0))}>", value)
        return value

    stages = [plain({"name": s.name, "status": s.status, "inputs": s.inputs, "outputs": s.outputs, "dropped": s.dropped,
                     "notes": s.notes}) for s in response.trace.stages if s.name not in ("log_write",)]
    return {
        "results": [r.content for r in response.results],
        "explanations": [plain(r.explanation.to_dict()) for r in response.results],
        "response": plain(response.explanation.to_dict()),
        "empty_reason": plain(response.empty_reason),
        "stages": stages,
    }


def _first_difference(a, b, path="") -> str | None:
    """Where two views first differ (for a readable failure message)."""
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=str):
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mine=st.lists(sentence, min_size=1, max_size=8), theirs=st.lists(sentence, min_size=1, max_size=12),
       queries=st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(" ".join), min_size=1, max_size=3))
def test_unreadable_records_change_nothing_the_principal_sees(mine, theirs, queries):
    with tempfile.TemporaryDirectory() as tmp:
        alone = _build(Path(tmp) / "a.sqlite", mine, [], interleave=False)
        crowded = _build(Path(tmp) / "b.sqlite", mine, theirs, interleave=True)
        try:
            for query in queries:
                a, b = _view(alone, query), _view(crowded, query)
                assert a == b, f"{query}: {_first_difference(a, b)}"
        finally:
            alone.close()
            crowded.close()


def test_twelve_unreadable_divorce_records_do_not_change_bobs_search(tmp_path):
    """The issue's reproduction: stores differing only in twelve of alice's records about a divorce."""
    mine = ["Note: the divorce lawyer called about the garden.", "Note: tulips in the garden.", "Note: jazz and tea."]
    theirs = [f"Note: divorce paperwork step {i} with the lawyer." for i in range(12)]
    alone = _build(tmp_path / "a.sqlite", mine, [], interleave=False)
    crowded = _build(tmp_path / "b.sqlite", mine, theirs, interleave=True)
    try:
        a, b = _view(alone, "divorce"), _view(crowded, "divorce")
        assert a == b
        lexical = next(s for s in a["stages"] if s["name"] == "lexical")
        assert lexical["outputs"]["term_statistics"][0]["documents"] == 1
        assert lexical["inputs"]["readable_records"] == 3
    finally:
        alone.close()
        crowded.close()
