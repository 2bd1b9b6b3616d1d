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

    registry = display.DisplayRegistry()  # a registry of the test's own: the library's stays as it was
    registry.register(Base, html=lambda obj: "<p>base</p>", frame=lambda obj: ["row"])
    assert registry.html(Child()) == "<p>base</p>" and registry.frame(Child()) == ["row"]


def test_a_registry_calls_its_loader_once_on_the_first_lookup_that_finds_nothing():
    registry = display.DisplayRegistry("memory_core.notebook.displays:register_displays")
    assert registry.contents() == {"html": [], "frame": [], "views": []} and not registry.loaded
    with pytest.warns(RuntimeWarning, match="no HTML display registered for Thing"):
        registry.html(Thing())
    assert registry.loaded and "SearchResponse" in registry.contents()["html"] and registry.contents()["views"] == ["record"]


def test_a_failing_loader_warns_and_displays_fall_back_to_text():
    registry = display.DisplayRegistry("memory_core.no_such_module:register_displays")
    with pytest.warns(RuntimeWarning, match="notebook displays are unavailable"):
        with pytest.warns(RuntimeWarning, match="no HTML display registered"):
            assert registry.html(Thing()) == "<pre>Thing(&lt;b&gt;bold&lt;/b&gt;)</pre>"
    assert isinstance(registry.load_error, ModuleNotFoundError)


# A fresh interpreter imports what the notebook's modules import, takes the size of every module-level
# dict, list and set of memory_core, imports the notebook package and its displays module, and
# compares: nothing may have been registered anywhere, least of all in the display registry.
NO_SIDE_EFFECTS = """
import importlib, sys
import memory_core, memory_core.service, memory_core.extract.runs, memory_core.retrieve.ambient
from memory_core import display

def state():
    out = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("memory_core") and not name.startswith("memory_core.notebook"):
            for attr, value in vars(module).items():
                if isinstance(value, (dict, list, set)) and not attr.startswith("__"):
                    out[f"{name}.{attr}"] = len(value)
    return out | {"display.registry": (display.registry.loaded, repr(display.registry.contents()))}

before = state()
importlib.import_module("memory_core.notebook.displays")
assert "memory_core.notebook.displays" in sys.modules
after = state()
changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()
           if k in before and before[k] != after.get(k)}
assert not changed, changed
assert display.registry.contents() == {"html": [], "frame": [], "views": []} and not display.registry.loaded
print("ok")
"""


def test_importing_the_notebook_displays_changes_no_global_state():
    done = subprocess.run([sys.executable, "-c", NO_SIDE_EFFECTS], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


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
