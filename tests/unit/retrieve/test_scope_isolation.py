"""A record in a scope the searching agent cannot read never appears anywhere: not in any stage's
candidates, drops or notes, not in the response, and not in the logged search."""

import json
import re

import pytest

from memory_core.retrieve.search_log import decode_row
from memory_core import load_settings
from memory_core.store.db import dumps

from .helpers import write

_ID = re.compile(r"mem_[0-9a-f]{16}")


@pytest.fixture
def settings():
    """Keep every query term: in this tiny store "sushi" is in every record and would be dropped as too common."""
    return load_settings(retrieval={"lexical_max_df_share": 1.0})


@pytest.fixture
def world(service):
    """Alice and Bob, three agents, a project; every record mentions sushi and Priya."""
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    service.grant("assistant", "project:atlas", read=True, actor="t")
    service.grant("researcher", "user:bob", read=True, write=True, actor="t")
    service.grant("pm", "project:atlas", read=True, write=True, actor="t")
    service.grant("pm", "project:secret", read=True, write=True, actor="t")
    ids = {}
    a = service.start_session(agent_id="assistant", user_id="alice")
    ids["alice"] = write(a, "The user loves sushi with Priya on Fridays.", attribute="food", mentions=["Priya"])
    b = service.start_session(agent_id="researcher", user_id="bob")
    ids["bob"] = write(b, "The user loves sushi and works with Priya.", attribute="food", mentions=["Priya"])
    ids["bob_about_priya"] = write(b, "Priya prefers sushi for team lunches.", about="Priya", about_kind="person", attribute="lunch")
    r = service.start_session(agent_id="researcher", user_id="alice")
    # The researcher's private scope for alice is readable only by the researcher acting for alice.
    ids["researcher_alice_private"] = _private_write(service, r, "Sushi and Priya notes kept by the researcher.")
    p = service.start_session(agent_id="pm", user_id="carol", project_id="atlas")
    ids["atlas"] = write(p, "The atlas team orders sushi when Priya visits.", target="current_project", about="atlas", about_kind="project", attribute="lunch")
    s = service.start_session(agent_id="pm", user_id="carol", project_id="secret")
    ids["secret"] = write(s, "Secret project sushi budget approved by Priya.", target="current_project", about="secret", about_kind="project", attribute="budget")
    # A stored grant on another pair's private scope must be ignored by policy.
    with service.store.transaction() as conn:
        conn.execute("INSERT INTO grants (agent_id, scope_kind, scope_id, can_read, can_write, created_at, created_by) "
                     "VALUES ('assistant', 'agent', 'researcher/alice', 1, 0, 'x', 'attacker')")
    return ids


def _private_write(service, session, content):
    from memory_core.ingest.writer import WriteRequest
    from memory_core.policy.scopes import private_scope

    request = WriteRequest(type="episodic", content=content, scope=private_scope(session.agent_id, session.user_id),
                           source_kind="agent_inference", agent_id=session.agent_id, user_id=session.user_id,
                           actor="test", mentions=["Priya"], session_id=session.id)
    return service.ingestor.write(request, session.access()).record.id


def _ids_in(value) -> set[str]:
    return set(_ID.findall(value if isinstance(value, str) else dumps(value)))


@pytest.mark.parametrize("agent,user,visible,hidden", [
    ("assistant", "alice", {"alice", "atlas"}, {"bob", "bob_about_priya", "researcher_alice_private", "secret"}),
    ("researcher", "bob", {"bob", "bob_about_priya"}, {"alice", "atlas", "researcher_alice_private", "secret"}),
    ("researcher", "alice", {"researcher_alice_private"}, {"alice", "bob", "bob_about_priya", "atlas", "secret"}),
    # The assistant's project grant holds whoever it acts for; nothing of Bob's is granted to it.
    ("assistant", "bob", {"atlas"}, {"alice", "bob", "bob_about_priya", "secret", "researcher_alice_private"}),
])
def test_no_stage_response_or_log_row_names_an_unreadable_record(service, world, agent, user, visible, hidden):
    readable = set(service.access(agent, user).readable)
    for query, hints in (("sushi with Priya", []), ("Priya", ["Priya", "atlas", "secret"]), ("budget approved", [])):
        response = service.search(agent_id=agent, user_id=user, query=query, entity_hints=hints, limit=50, historical=True)
        row = service.store.query_one("SELECT * FROM search_log WHERE id = ?", (response.search_id,))
        seen = _ids_in(response.to_dict(include_records=False)) | _ids_in(json.dumps(decode_row(service.store, row)))
        for record_id in seen:
            assert service.record(record_id).scope in readable, (query, record_id)
        assert not seen & {world[name] for name in hidden}
        if query == "sushi with Priya":
            assert {world[name] for name in visible} <= set(response.record_ids)
            lexical = {c["id"] for c in response.trace.stage("lexical").outputs["candidates"]}
            assert lexical == {world[name] for name in visible}  # the generator ran and only saw readable rows


def test_entities_of_unreadable_scopes_never_match(service, world):
    response = service.search(agent_id="assistant", user_id="alice", query="What does Priya prefer?", limit=50)
    matched = response.trace.stage("entity").outputs["entities"]
    scopes = {service.entity(e["id"])["scope"] for e in matched}
    assert scopes <= set(service.access("assistant", "alice").readable)
    assert world["bob_about_priya"] not in response.record_ids


def test_index_mask_alone_excludes_other_scopes(service, world):
    """The dense generator's mask admits only readable scopes, even with no lexical or entity help."""
    response = service.search(agent_id="researcher", user_id="bob", query="zzz unrelated words", limit=50)
    dense = response.trace.stage("dense").outputs["candidates"]
    assert {c["id"] for c in dense} <= {world["bob"], world["bob_about_priya"]}
