"""The "Who reads my memory" box on a user's page (AppTest): her readers and searches, never Bob's; staff do not get it."""

from tests.ui.conftest import frames_with, service_for


def test_alice_sees_the_agents_that_read_her_and_the_searches_made_for_her(open_page):
    at = open_page("records.py", "user")
    service = service_for(at)
    bob = service.start_session(agent_id="helper", user_id="bob")
    bob.call_tool("memory_search", {"query": "Bob's locker combination"})
    mine = service.start_session(agent_id="assistant", user_id="alice")
    mine.call_tool("memory_search", {"query": "how does Alice like her answers"})
    at.run()
    assert not at.exception
    assert any(e.label == "Who reads my memory" for e in at.expander)
    agents = frames_with(at, "agent", "scope", "how")
    assert agents and ("assistant", "user:alice") in set(zip(agents[0]["agent"], agents[0]["scope"]))
    assert not agents[0]["scope"].str.contains("bob").any()
    searches = frames_with(at, "query", "results")
    assert searches and "how does Alice like her answers" in set(searches[0]["query"])
    assert "Bob's locker combination" not in set(searches[0]["query"])


def test_staff_do_not_get_the_box(open_page):
    at = open_page("records.py", "operator")
    assert not any(e.label == "Who reads my memory" for e in at.expander)
