"""Hypothesis-generated stores: export, import into an empty store, export again gives the same file
and the same search answers, whatever mix of writes, revisions, conflicts, forgets and odd text."""

import itertools

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from memory_core import FixedClock, MemoryService
from memory_core.portable.export import export_to
from memory_core.portable.importer import import_file
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder

WORDS = ["tea", "coffee", "Lisbon", "Porto", "jazz", "chess", "Rust", "Go", "\u202eRTL\u202c", "\u2028", "na\u00efve", "\U0001F3B7",
         "Dana", "Omar", "Kyoto", "deadline", "May", "June"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(lambda ws: "The user " + " ".join(ws) + ".")
write = st.fixed_dictionaries({"op": st.just("write"), "type": st.sampled_from(["semantic", "episodic"]), "content": text,
                               "attribute": st.sampled_from(["drink", "home_city", "music", None]),
                               "mentions": st.lists(st.sampled_from(["Dana", "Omar", "Kyoto"]), max_size=2),
                               "valid_until": st.sampled_from([None, "2026-09-01"])})
system = st.fixed_dictionaries({"op": st.just("system"), "content": text, "attribute": st.sampled_from(["drink", "home_city"])})
revise = st.fixed_dictionaries({"op": st.just("revise"), "pick": st.integers(0, 50), "content": text})
forget = st.fixed_dictionaries({"op": st.just("forget"), "pick": st.integers(0, 50)})
project = st.fixed_dictionaries({"op": st.just("project"), "content": text, "about": st.sampled_from(["Apollo", "Zephyr"])})
ops = st.lists(st.one_of(write, write, system, revise, forget, project), min_size=1, max_size=14)

_names = itertools.count()


def _build(target, plan):
    svc = MemoryService.open(target, default_settings(), clock=FixedClock("2026-03-05T10:00:00Z"), embedder=HashingEmbedder())
    svc.grant("assistant", "user:alice", read=True, write=True, actor="t")
    svc.grant("assistant", "project:apollo", read=True, write=True, actor="t")
    session = svc.start_session(agent_id="assistant", user_id="alice")
    for step, op in enumerate(plan):
        svc.clock = FixedClock(f"2026-03-05T10:{step:02d}:00Z")  # every write at its own minute
        svc.ingestor.clock = svc.lifecycle.clock = svc.clock
        live = [r["id"] for r in svc.store.query("SELECT id FROM records WHERE status IN ('provisional','confirmed') ORDER BY seq")]
        if op["op"] == "write":
            args = {k: op[k] for k in ("type", "content", "mentions") if op[k]}
            if op["attribute"] and op["type"] == "semantic":
                args["attribute"] = op["attribute"]
            if op["valid_until"]:
                args["valid_until"] = op["valid_until"]
            session.call_tool("memory_write", args)
        elif op["op"] == "system":
            svc.write_system_fact(scope="user:alice", content=op["content"], attribute=op["attribute"])
        elif op["op"] == "project":
            svc.write_system_fact(scope="project:apollo", content=op["content"], about=op["about"], attribute="status")
        elif live and op["op"] == "revise":
            session.call_tool("memory_revise", {"record_id": live[op["pick"] % len(live)], "action": "update", "reason": "r",
                                                "content": op["content"]})
        elif live and op["op"] == "forget":
            session.call_tool("memory_forget", {"record_id": live[op["pick"] % len(live)], "reason": "gone"})
    return svc


def _body(path):
    return path.read_text(encoding="utf-8").splitlines()[1:]


@settings(max_examples=20, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target], suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plan=ops)
def test_any_store_round_trips(make_target, tmp_path, plan):
    n = next(_names)
    source = _build(make_target(f"src{n}.sqlite"), plan)
    target = MemoryService.open(make_target(f"dst{n}.sqlite"), default_settings(), clock=source.clock, embedder=HashingEmbedder())
    try:
        export_to(source, tmp_path / f"a{n}.jsonl", sessions=True)
        report = import_file(target, tmp_path / f"a{n}.jsonl")
        assert set(report["counts"]) <= {"create"}, [item for item in report["lines"] if item["action"] != "create"]
        export_to(target, tmp_path / f"b{n}.jsonl", sessions=True)
        assert _body(tmp_path / f"b{n}.jsonl") == _body(tmp_path / f"a{n}.jsonl")
        for grant in source.grants():
            target.grant(grant["agent_id"], grant["scope"], read=grant["can_read"], write=grant["can_write"], actor="t")
        for query in ("tea Lisbon", "Dana Kyoto", "jazz \u202eRTL\u202c"):
            mine = source.search(agent_id="assistant", user_id="alice", query=query)
            theirs = target.search(agent_id="assistant", user_id="alice", query=query)
            assert [r.record.id for r in theirs.results] == [r.record.id for r in mine.results]
    finally:
        source.close()
        target.close()
