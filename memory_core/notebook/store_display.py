"""Notebook display of an open store (``MemoryService``): what it holds, at a glance."""

from __future__ import annotations

from typing import Any

from . import markup as m
from .safe import safe_html

GROUPS = (("by_type", "type"), ("by_status", "status"), ("by_scope_kind", "scope kind"), ("by_source_kind", "source kind"))


def _demo_now(service) -> str | None:
    try:
        return service.store.get_meta("demo_now")
    except Exception:  # noqa: BLE001 - only a hint
        return None


@safe_html
def service_html(service) -> str:
    """Store path, embedder, counts, and records by type, status, scope kind and source kind."""
    stats = service.stats()
    embedder = stats.get("embedder") or {}
    demo_now = _demo_now(service)
    facts: list[tuple[str, Any]] = [
        ("path", stats["path"]), ("records", stats["records"]), ("entities", stats["entities"]), ("grants", stats["grants"]),
        ("sessions", stats["sessions"]), ("provisional", stats["provisional"]), ("flagged for review", stats["review_due"]),
        ("indexed vectors", stats["indexed_vectors"]), ("records version", stats["records_version"]),
        ("embedder", f"{embedder.get('model')} (version {embedder.get('version')}, {embedder.get('dim')} dims)"),
        ("clock", service.clock.now().isoformat()),
    ]
    if demo_now:
        facts.append(("demo store", f"built by memory_core.demo; demo now is {demo_now}"))
    cells = "".join(f"<td>{m.esc(label)}{m.table([{label: k, 'records': v} for k, v in (stats.get(key) or {}).items()])}</td>"
                    for key, label in GROUPS)
    return m.page(m.heading(f"memory store · {stats['records']} records"), m.pairs(facts), f"<table><tr>{cells}</tr></table>",
                  m.para("service.search(...), service.show_record(id), service.extraction_run(id) display the same way; "
                         "memory_core.notebook.figures has the admin app's charts.", "muted"))


def service_frame(service):
    """Record counts as rows ``group, value, records`` (group: type, status, scope kind, source kind)."""
    import pandas as pd

    stats = service.stats()
    rows = [{"group": label, "value": k, "records": v} for key, label in GROUPS for k, v in (stats.get(key) or {}).items()]
    return pd.DataFrame(rows, columns=["group", "value", "records"])
