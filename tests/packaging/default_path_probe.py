"""Run inside a fresh venv that holds only the built wheel (and its declared dependencies).

Writes one record and searches for it with the default embedder, then prints one JSON line saying
what ran: the embedder's runtime, which optional speed-ups the library found, whether torch was
imported, and which extras' packages are importable. The test reads that line; this script never
imports anything from the checkout (it is run from a directory outside it).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path


def main() -> None:
    from memory_core import MemoryService, load_settings
    from memory_core.embed import embedder_runtime
    from memory_core.index.ann import ExactBackend, backend_factory
    from memory_core.store import json_columns

    with tempfile.TemporaryDirectory() as tmp, MemoryService.open(Path(tmp) / "probe.sqlite", load_settings()) as service:
        service.grant("assistant", "user:alice", read=True, write=True, actor="probe")
        session = service.start_session(agent_id="assistant", user_id="alice")
        written = session.call_tool("memory_write", {
            "content": "The user prefers green tea in the morning.", "type": "semantic", "target": "personal",
            "evidence": "I prefer green tea in the morning.", "source_kind": "user_statement"})
        found = session.call_tool("memory_search", {"query": "what does the user drink in the morning?"})
        trace = service.store.query_one("SELECT trace FROM search_log ORDER BY rowid DESC LIMIT 1")[0]
        report = {
            "memory_core": str(Path(sys.modules["memory_core"].__file__).parent),
            "written": bool(written.get("ok")),
            "found": [r.get("content") for r in found.get("results", [])],
            "runtime": embedder_runtime(service.embedder),
            "model": [service.embedder.model_name, service.embedder.model_version],
            "ann": backend_factory(1, 1, 1) is not ExactBackend,
            "orjson": json_columns._orjson is not None,
            "lz4": json_columns._lz4 is not None,
            "trace_codec": bytes(trace[:2]).decode("ascii", "replace") if isinstance(trace, (bytes, memoryview)) else "text",
            "torch_imported": "torch" in sys.modules,
            "importable": {name: importlib.util.find_spec(name) is not None
                           for name in ("streamlit", "plotly", "pandas", "argon2", "FlagEmbedding", "psycopg", "openai", "mcp")},
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
