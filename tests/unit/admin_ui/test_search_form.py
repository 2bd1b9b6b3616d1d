from datetime import date

from admin_ui.search import SearchForm


def test_the_form_becomes_service_search_arguments():
    form = SearchForm(" assistant ", "alice", "Lisbon?", types=["semantic"], time_from=date(2026, 3, 1),
                      time_to=date(2026, 3, 31), entity_hints="Sam, , Atlas", limit=5, historical=True)
    kwargs = form.kwargs()
    assert kwargs["agent_id"] == "assistant" and kwargs["types"] == ["semantic"]
    assert kwargs["time_from"] == "2026-03-01T00:00:00.000000Z"
    assert kwargs["time_to"].startswith("2026-03-31T23:59:59")
    assert kwargs["entity_hints"] == ["Sam", "Atlas"] and kwargs["historical"] is True
    assert SearchForm("a", "u", "q").kwargs()["types"] is None
