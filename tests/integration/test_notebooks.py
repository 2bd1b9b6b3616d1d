"""The notebooks in docs/notebooks/ are committed without outputs, and run end to end on a real
ipykernel (this interpreter, through a kernelspec in a temporary JUPYTER_PATH) against a demo
store built with the packaged model."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
KERNEL = "agent-memory-test"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, f"cell {cell.id} has stored output"
    assert "widgets" not in nb.metadata


@pytest.fixture
def kernel(tmp_path, monkeypatch) -> str:
    """A kernelspec for this interpreter, visible only to this test."""
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "agent-memory (tests)", "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(key, "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    return KERNEL


def _outputs(nb, starts: str) -> list[dict]:
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts))
    return cell.outputs


def _html(outputs: list[dict]) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in outputs)


@pytest.mark.model
def test_the_quickstart_runs_end_to_end(kernel, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    store = tmp_path / "demo.sqlite"
    prebuilt = os.environ.get("E2E_DEMO_STORE")
    if prebuilt and Path(prebuilt).is_file():
        shutil.copy(prebuilt, store)  # reuse a built demo store while iterating locally
    monkeypatch.setenv("AGENT_MEMORY_DEMO_STORE", str(store))
    path = ROOT / "docs" / "notebooks" / "quickstart.ipynb"
    committed = path.read_text()
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(path.parent)}}).execute()

    assert store.is_file() and path.read_text() == committed  # built where asked; the notebook file untouched
    streams = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "could not display" not in streams  # no display fell back to plain text
    assert "memory store" in _html(_outputs(nb, "import os"))
    hit = _html(_outputs(nb, "response = service.search"))
    assert "result(s)" in hit and "No memory returned" not in hit
    empty = _html(_outputs(nb, "empty = service.load_search"))
    assert "No memory returned" in empty and "floor" in empty and "opened from the search log" in empty
    stages = _html(_outputs(nb, "for name in"))
    assert all(f"stage {name}" in stages for name in ("dense", "lexical", "entity", "fusion", "gate"))
    assert "Lisbon" in _html(_outputs(nb, 'service.search(agent_id="assistant", user_id="alice", query="Lisbon'))
    lineage = _html(_outputs(nb, "view = service.show_record"))
    assert "current version" in lineage and lineage.count("superseded") >= 2
    assert "succeeded" in _html(_outputs(nb, "run = service.extract_transcript"))
    assert "<iframe" in _html(_outputs(nb, "app = launch_app"))
    plots = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(plots) >= 5
