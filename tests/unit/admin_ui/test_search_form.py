from datetime import date

from admin_ui.data.search import SearchForm


def test_the_form_becomes_service_search_arguments():
    form = SearchForm(" assistant ", "alice", "Lisbon?", types=["semantic"], time_from=date(2026, 3, 1),
                      time_to=date(2026, 3, 31), entity_hints="Sam, , Atlas", limit=5, historical=True)
    kwargs = form.kwargs()
    assert kwargs["agent_id"] == "assistant" and kwargs["types"] == ["semantic"]
    assert kwargs["time_from"] == "2026-03-01T00:00:00.000000Z"
    assert kwargs["time_to"].startswith("2026-03-31T23:59:59")
    assert kwargs["entity_hints"] == ["Sam", "Atlas"] and kwargs["historical"] is True
    assert SearchForm("a", "u", "q").kwargs()["types"] is None


def test_the_form_says_what_is_missing_and_the_query_limit():
    from admin_ui.data.search import form_problem

    assert form_problem("a", "u", "hello", 2000) is None
    assert form_problem("a", "u", "   ", 2000) == "Type a query (this one is only whitespace)."
    assert form_problem(None, "u", "q", 2000) == "Choose an agent."
    assert form_problem("", None, "", 2000) == "Choose an agent, choose the user it acts for and type a query."
    assert "2,500 characters long; the limit is 2,000" in form_problem("a", "u", "x" * 2500, 2000)
