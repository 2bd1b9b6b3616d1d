"""One fact, two records, one forget (issue 24, item 3).

The model saves "The user has a cat called Miso." (attribute ``pet``); session-end extraction
(the offline extractor the tests run) proposes the same sentence under another attribute. It is
the same observation: extraction must reinforce the record the session saved, not write a copy,
and a forget must take every live record stating the same fact from the same evidence, and say
so. "Same fact" is ``memory_core.ingest.matching.states_same_fact``; docs/write-path.md has it.
Runs on SQLite and, with ``--store-backend postgresql``, on the real server.
"""

from __future__ import annotations

import pytest

from admin_ui.data import actions
from admin_ui.auth import Identity
from memory_core.ingest.matching import FactProbe, fact_text, states_same_fact
from memory_core.ingest.writer import WriteRequest
from memory_core.policy.scopes import parse_scope
from tests.unit.extract.helpers import facts

CAT = "The user has a cat called Miso."
SAID = "I have a cat called Miso."


def _cat_session(service, *, evidence: bool = True):
    """A session in which the user mentions the cat and the model saves it; returns (session, tool result)."""
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", f"{SAID} She hates the vacuum cleaner.")
    args = {"type": "semantic", "content": CAT, "attribute": "pet"}
    if evidence:
        args |= {"source_kind": "user_statement", "evidence": SAID}
    saved = session.call_tool("memory_write", args)
    assert saved["ok"] and saved["outcome"] == "created", saved
    session.record_turn("assistant", "Noted: Miso the cat.")
    return session, saved


def _live_cat_records(service) -> list[dict]:
    return [r for r in facts(service) if "miso" in r["content"].lower() and r["status"] in ("provisional", "confirmed")]


def test_extraction_reinforces_the_fact_the_session_already_saved(service, alice):
    session, saved = _cat_session(service)
    detail = service.run_extraction(session.end())
    assert detail.status == "succeeded"
    [row] = [c for c in detail.candidates if c["candidate"].get("kind") == "fact"]
    assert row["candidate"]["content"] == CAT and row["candidate"]["attribute"] != "pet"  # another attribute
    assert row["outcome"] == "reinforced" and row["record_id"] == saved["record_id"], row
    notes = row["detail"]["write"]["notes"]
    assert any(f"states the same fact as {saved['record_id']}" in n for n in notes), notes
    assert [r["id"] for r in _live_cat_records(service)] == [saved["record_id"]]
    # The search shows one record, and the forget leaves none.
    reader = service.start_session(agent_id="assistant", user_id="alice")
    found = reader.call_tool("memory_search", {"query": "what is the name of the user's cat"})
    assert [r["id"] for r in found["results"] if r["source_kind"] != "session_summary"] == [saved["record_id"]]
    forgotten = reader.call_tool("memory_forget", {"record_id": saved["record_id"], "reason": "the user said: forget my cat"})
    assert forgotten["ok"], forgotten
    assert _live_cat_records(service) == []
    again = reader.call_tool("memory_search", {"query": "what is the name of the user's cat"})
    assert [r for r in again["results"] if "miso" in (r["content"] or "").lower()] == []


def test_an_unevidenced_save_is_recognised_and_promoted_by_the_quote_extraction_finds(service, alice):
    session, saved = _cat_session(service, evidence=False)
    assert saved["status"] == "provisional" and saved["source_kind"] == "agent_inference"
    detail = service.run_extraction(session.end())
    [row] = [c for c in detail.candidates if c["candidate"].get("kind") == "fact"]
    assert row["outcome"] == "reinforced" and row["record_id"] == saved["record_id"]
    record = service.record(saved["record_id"])
    assert record.status == "confirmed" and record.source_kind == "user_statement"  # the user's own words, now located
    assert record.evidence == SAID and record.evidence_turn == 0
    assert len(_live_cat_records(service)) == 1


def _older_copy(service, session_id: str, attribute: str, content: str = CAT, record_type: str = "semantic") -> str:
    """The second record older code left: the same words from the same turn, written without the
    same-fact check (``dedupe=False``, as a session summary is written)."""
    request = WriteRequest(
        type=record_type, content=content, scope=parse_scope("user:alice"), source_kind="user_statement",
        agent_id="assistant", user_id="alice", actor="extractor:old", attribute=attribute if record_type != "episodic" else None,
        evidence=SAID, session_id=session_id, source_ref=session_id, operation="extraction", evidence_verified=True,
        evidence_turn=0, dedupe=False,
    )
    return service.ingestor.write(request, service.access("assistant", "alice")).record.id


def test_a_forget_takes_every_live_record_stating_the_same_fact_and_says_so(service, alice):
    session, saved = _cat_session(service)
    copy = _older_copy(service, session.id, "cats_count", content="the user has a cat called Miso")  # folded: the same words
    assert len(_live_cat_records(service)) == 2
    preview = service.forget_preview(saved["record_id"])
    whys = {r["id"]: r["why"] for r in preview["records"]}
    assert set(whys) == {saved["record_id"], copy}
    assert whys[copy].startswith(f"states the same fact as {saved['record_id']} (the same words from the same evidence, "
                                 f"session {session.id} turn 0)")
    # the admin app's confirmation form shows the same line (what alice sees on "My memory")
    lines = actions.forget_preview(service, Identity("alice", "user", user_id="alice"), saved["record_id"])
    assert any(line.startswith(f"record {copy} ") and "states the same fact as" in line for line in lines), lines
    result = session.call_tool("memory_forget", {"record_id": saved["record_id"], "reason": "forget my cat"})
    assert result["ok"] and set(result["forgotten"]) == {saved["record_id"], copy}
    assert {r["id"]: r["why"] for r in result["records"]} == whys  # the tool says the same as the preview
    assert _live_cat_records(service) == []
    assert service.record(copy).status == "deleted" and service.record(copy).content == ""
    assert service.store.scalar("SELECT COUNT(*) FROM entities WHERE canonical_name = 'Miso'") == 0
    reader = service.start_session(agent_id="assistant", user_id="alice")
    found = reader.call_tool("memory_search", {"query": "the user's cat Miso"})
    assert [r for r in found["results"] if "miso" in (r["content"] or "").lower()] == []


def test_an_episodic_record_of_the_same_words_stays_a_record_of_its_own_but_goes_with_the_forget(service, alice):
    session, saved = _cat_session(service)
    event = session.call_tool("memory_write", {"type": "episodic", "content": CAT, "evidence": SAID})
    assert event["ok"] and event["outcome"] == "created" and event["record_id"] != saved["record_id"]
    result = session.call_tool("memory_forget", {"record_id": event["record_id"], "reason": "forget my cat"})
    assert set(result["forgotten"]) == {event["record_id"], saved["record_id"]}
    assert _live_cat_records(service) == []


def test_other_facts_of_the_same_turn_and_the_same_words_from_another_session_stay_and_are_listed(service, alice):
    session, saved = _cat_session(service)
    other_fact = session.call_tool("memory_write", {"type": "semantic", "content": "The user's cat hates the vacuum cleaner.",
                                                    "attribute": "cat_dislikes", "source_kind": "user_statement",
                                                    "evidence": "She hates the vacuum cleaner."})
    assert other_fact["ok"]
    session.end()
    later = service.start_session(agent_id="assistant", user_id="alice")
    later.record_turn("user", "As I said, I have a cat called Miso.")
    again = later.call_tool("memory_write", {"type": "semantic", "content": CAT, "attribute": "cat_name",
                                             "source_kind": "user_statement", "evidence": SAID})
    assert again["outcome"] == "created"  # another session: a separate observation, not the same fact
    preview = service.forget_preview(saved["record_id"])
    assert [r["id"] for r in preview["records"] if r["id"] != saved["record_id"] and "summary" not in r["why"]] == []
    kept = {r["id"]: r["why"] for r in preview["not_forgotten"]}
    assert kept[other_fact["record_id"]].startswith("quotes the same turn")
    assert kept[again["record_id"]].startswith("says the same words from other evidence")
    assert any(line.startswith(f"not forgotten: record {again['record_id']}") for line in preview["lines"])
    result = later.call_tool("memory_forget", {"record_id": saved["record_id"], "reason": "forget that"})
    assert {r["id"] for r in result["not_forgotten"]} == set(kept)
    assert service.record(other_fact["record_id"]).status == "confirmed"
    assert service.record(again["record_id"]).status == "confirmed"


@pytest.mark.parametrize("a, b, same", [
    (("user:alice", CAT, "ses_1", 0), ("user:alice", "the user has a cat called miso", "ses_1", 0), True),
    (("user:alice", CAT, "ses_1", 0), ("user:alice", "The user has a cat called \u201cMiso\u201d.", "ses_1", 0), False),
    (("user:alice", CAT, "ses_1", 0), ("user:alice", "The user has a cat called  Miso!", "ses_1", None), True),
    (("user:alice", CAT, "ses_1", 0), ("user:alice", CAT, "ses_1", 2), False),  # the user said it twice: two observations
    (("user:alice", CAT, "ses_1", 0), ("user:alice", CAT, "ses_2", 0), False),
    (("user:alice", CAT, "ses_1", 0), ("project:zoo", CAT, "ses_1", 0), False),  # another owner
    (("user:alice", CAT, None, None), ("user:alice", CAT, None, None), False),  # no source: nothing says it is one observation
    (("user:alice", CAT, "ses_1", 0), ("user:alice", "The user has a cat named Miso.", "ses_1", 0), False),  # a paraphrase
])
def test_what_the_same_fact_means(a, b, same):
    def probe(scope, content, source, turn):
        return FactProbe(scope, fact_text(content), source, turn)

    assert states_same_fact(probe(*a), probe(*b)) is same
    assert states_same_fact(probe(*b), probe(*a)) is same
