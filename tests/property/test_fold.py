"""The full-text index fold (``memory_core.text.index_fold``) takes a shortcut for ASCII words; it must give exactly
what the general rule gives for every text, ASCII or not."""

import unicodedata

from hypothesis import given, strategies as st

from memory_core.text import index_fold as fold


def _by_the_rule(token: str) -> str:
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@given(st.text(max_size=40) | st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_fold_is_the_general_rule_for_any_text(text):
    assert fold(text) == _by_the_rule(text)


def test_fold_examples():
    assert fold("Zoë") == "zoe" and fold("STRASSE") == "strasse" and fold("Straße") == "strasse" and fold("Ab1_") == "ab1_"
