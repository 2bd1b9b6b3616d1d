"""The lexical score's arithmetic and the query-name test, as pure functions."""

import math

import numpy as np

from memory_core.retrieve.gate.names import unknown_names
from memory_core.retrieve.generate.lexical_score import LexicalResult, idf, lookup_key, partial_score


def test_idf_is_positive_and_falls_as_a_term_gets_common():
    assert idf(100, 0) > idf(100, 1) > idf(100, 50) > idf(100, 100) > 0
    assert idf(100, 0) == math.log(1 + 100.5 / 0.5)


def _result(counts: dict[str, int], total: int = 100) -> LexicalResult:
    return LexicalResult(total, [{"term": t, "documents": d, "idf": idf(total, d), "used": True, "reason": None}
                                 for t, d in counts.items()])


def test_the_rest_of_the_question_leaves_the_names_out():
    result = _result({"alice": 40, "coffee": 0, "like": 10})
    rest = partial_score(result, ("alice", "like"), {"alice"})
    assert rest == idf(100, 10) / (idf(100, 0) + idf(100, 10))
    assert partial_score(result, ("alice",), {"alice", "coffee", "like"}) is None  # only the name


def test_unknown_names_are_capitalised_words_no_readable_record_holds():
    result = _result({"caroline": 0, "research": 3, "may": 0})
    assert unknown_names("What did Caroline research in May?", result) == ["Caroline"]
    assert unknown_names("Caroline research", result) == []  # the first word is not taken for a name
    held = _result({"caroline": 0, "lisbon": 2})
    assert unknown_names("Did Caroline visit Lisbon?", held) == []  # one name is known
    assert unknown_names("What did Caroline do?", None) == []


def test_the_cache_key_changes_with_the_readable_set_and_the_store_state():
    a = np.array([True, False, True])
    assert lookup_key(a, 7) == lookup_key(a.copy(), 7)
    assert lookup_key(a, 7) != lookup_key(a, 8) != lookup_key(np.array([True, True, True]), 8)


def test_unheld_names_are_the_query_names_no_readable_record_holds_whatever_the_others():
    from memory_core.retrieve.gate.names import unheld_names

    result = LexicalResult(total=10, terms=[{"term": "disney", "documents": 0, "idf": None, "used": False, "reason": None},
                                            {"term": "sam", "documents": 4, "idf": 1.0, "used": True, "reason": None},
                                            {"term": "june", "documents": 0, "idf": None, "used": False, "reason": None}])
    assert unheld_names("Which Disney movie did Sam mention in June?", result) == ["Disney"]  # months are not names
    assert unheld_names("Which movie did Sam mention?", result) == []
    assert unheld_names("Which Disney movie?", None) == []
