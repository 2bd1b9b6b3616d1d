"""A display that fails warns and falls back to escaped plain text; it never raises."""

import warnings

import pytest

from memory_core.notebook import safe_html
from memory_core.notebook.search_display import response_html


class Exploding:
    """Its renderer raises; its repr holds hostile text."""

    def __repr__(self) -> str:
        return "Exploding(<script>alert(1)</script>)"

    @safe_html
    def _render(self) -> str:
        raise ValueError("renderer broke")

    def _repr_html_(self) -> str:
        return self._render()


class Hopeless:
    """Both its renderer and its repr raise."""

    def __repr__(self) -> str:
        raise RuntimeError("repr broke too")


def test_a_failing_renderer_warns_and_shows_escaped_text():
    with pytest.warns(RuntimeWarning, match="could not display Exploding as HTML .*ValueError: renderer broke"):
        markup = Exploding()._repr_html_()
    assert markup == "<pre>Exploding(&lt;script&gt;alert(1)&lt;/script&gt;)</pre>"


def test_the_fallback_survives_a_failing_repr():
    render = safe_html(lambda obj: 1 / 0)
    with pytest.warns(RuntimeWarning, match="Hopeless"):
        markup = render(Hopeless())
    assert markup.startswith("<pre>&lt;") and "Hopeless object at" in markup


def test_a_broken_search_response_falls_back(hit):
    hit.trace = None  # any renderer error, e.g. a half-built object
    with pytest.warns(RuntimeWarning, match="SearchResponse"):
        markup = hit._repr_html_()
    assert markup.startswith("<pre>SearchResponse(") and "<img" not in markup


def test_a_closed_service_falls_back_instead_of_raising(tmp_path, clock, settings):
    from memory_core import MemoryService
    from tests.fakes import HashingEmbedder

    service = MemoryService.open(tmp_path / "closed.sqlite", settings, clock=clock, embedder=HashingEmbedder())
    service.close()
    with pytest.warns(RuntimeWarning, match="MemoryService"):
        markup = service._repr_html_()
    assert markup.startswith("<pre>")


def test_a_working_display_does_not_warn(hit):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert response_html(hit).startswith('<div class="am-nb">')
