import pytest

PAGES = ["overview.py", "search_explorer.py", "records.py", "review_queue.py", "grants.py", "entities.py",
         "extraction.py", "logs.py", "session_context.py", "ambient_profile.py", "keys.py"]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_for_an_operator(open_page, page):
    at = open_page(page, "operator")
    assert not at.exception
    assert at.title
