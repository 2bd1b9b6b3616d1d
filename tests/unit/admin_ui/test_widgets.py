import re

from admin_ui.views.widgets import md_escape

INJECTION = "<img src=x onerror=alert(1)> **bold** [link](javascript:x) :material/home:"


def test_markdown_escaping_neutralises_links_images_and_emphasis():
    escaped = md_escape(INJECTION)
    # every markdown-active character is preceded by a backslash, so nothing renders as markup
    assert not re.search(r"(?<!\\)[*\[\]()<>:]", escaped)
    assert re.sub(r"\\(.)", r"\1", escaped) == INJECTION


def test_typographic_pairs_stay_literal_in_markdown():
    from admin_ui.views.widgets import WORD_JOINER

    for text in ("a--b -- x", "x -> y", "a <- b", "1 >= 2", "1 <= 2", "a ~= b", "----"):
        escaped = md_escape(text)
        plain = re.sub(r"\\(.)", r"\1", escaped).replace(WORD_JOINER, "")
        assert plain == text
        for pair in ("--", "->", "<-", ">=", "<=", "~="):
            assert pair not in re.sub(r"\\(.)", r"\1", escaped)
