"""The one paged-query helper: filters as parameters, LIKE text escaped, pages clamped by callers."""

from memory_core.store.paging import Where, count_rows, like_pattern, page_sql, select_page
from tests.helpers import write


def test_like_pattern_escapes_the_wildcards_of_the_text_itself():
    assert like_pattern("50%_off\\") == "%50\\%\\_off\\\\%"


def test_equal_skips_missing_values_and_an_empty_filter_matches_everything():
    where = Where().equal("agent_id", None).equal("user_id", "").equal("status", 0)
    assert where.sql() == "status = ?" and where.params == [0]
    assert Where().sql() == "1=1"
    assert page_sql("id", "records r", Where().add("r.type = ?", "semantic"), "r.seq") == \
        "SELECT id FROM records r WHERE r.type = ? ORDER BY r.seq LIMIT ? OFFSET ?"


def test_pages_come_back_in_order_and_values_never_become_sql(service, alice):
    ids = [write(alice, f"The user owns plant number {i}.", attribute=f"plant_{i}") for i in range(5)]
    write(alice, "The user saves 50%_of everything.", attribute="savings")
    store = service.store
    where = Where().add("content LIKE ? ESCAPE '\\'", like_pattern("plant number"))
    assert count_rows(store, "records", where) == 5
    first = [r["id"] for r in select_page(store, "id", "records", where, "seq", 2, 0)]
    rest = [r["id"] for r in select_page(store, "id", "records", where, "seq", 10, 2)]
    assert first + rest == ids
    literal = Where().add("content LIKE ? ESCAPE '\\'", like_pattern("50%_of"))
    assert count_rows(store, "records", literal) == 1
    assert count_rows(store, "records", Where().add("content LIKE ? ESCAPE '\\'", like_pattern("5%f"))) == 0
    hostile = Where().equal("id", "x' OR 1=1 --")
    assert count_rows(store, "records", hostile) == 0 and store.scalar("SELECT COUNT(*) FROM records") == 6
