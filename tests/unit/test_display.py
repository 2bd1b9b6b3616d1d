"""The display registry: data classes render through it, never by importing notebook code."""

import subprocess
import sys
from pathlib import Path

import pytest

from memory_core import display

ROOT = Path(__file__).resolve().parents[2]


class Thing:
    def __repr__(self):
        return "Thing(<b>bold</b>)"


def test_an_unregistered_class_falls_back_to_escaped_text_with_a_warning():
    with pytest.warns(RuntimeWarning, match="no HTML display registered for Thing"):
        out = display.html(Thing())
    assert out == "<pre>Thing(&lt;b&gt;bold&lt;/b&gt;)</pre>"
    with pytest.raises(TypeError, match="no DataFrame conversion registered for Thing"):
        display.frame(Thing())
    with pytest.raises(LookupError):
        display.view("no-such-view")


def test_a_registered_renderer_serves_subclasses_too():
    class Base:
        pass

    class Child(Base):
        pass

    display.register(Base, html=lambda obj: "<p>base</p>", frame=lambda obj: ["row"])
    assert display.html(Child()) == "<p>base</p>" and display.frame(Child()) == ["row"]


def test_a_search_response_displays_without_importing_the_notebook_package_first(tmp_path):
    # A fresh interpreter: only memory_core is imported; the first display loads the renderers by name.
    code = (
        "import sys, warnings; warnings.simplefilter('error')\n"
        "from memory_core import FixedClock, MemoryService\n"
        "from memory_core.settings import default_settings\n"
        "from tests.fakes import HashingEmbedder\n"
        f"s = MemoryService.open({str(tmp_path / 'm.sqlite')!r}, default_settings(), clock=FixedClock('2026-03-05T10:00:00Z'), embedder=HashingEmbedder())\n"
        "assert 'memory_core.notebook' not in sys.modules\n"
        "r = s.search(agent_id='a', user_id='u', query='<script>x</script>')\n"
        "html = r._repr_html_()\n"
        "assert 'memory_core.notebook.displays' in sys.modules\n"
        "assert '<script>x' not in html and '&lt;script&gt;' in html, html[:300]\n"
        "assert s._repr_html_().count('records') >= 1\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
