import re

from admin_ui.widgets import md_escape

INJECTION = "<img src=x onerror=alert(1)> **bold** [link](javascript:x) :material/home:"


def test_markdown_escaping_neutralises_links_images_and_emphasis():
    escaped = md_escape(INJECTION)
    # every markdown-active character is preceded by a backslash, so nothing renders as markup
    assert not re.search(r"(?<!\\)[*\[\]()<>:]", escaped)
    assert re.sub(r"\\(.)", r"\1", escaped) == INJECTION
