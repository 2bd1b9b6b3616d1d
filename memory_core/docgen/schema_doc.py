"""Render docs/schema.md from a freshly migrated database: ``python -m memory_core.docgen.schema_doc``."""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

from ..store.migrations import MIGRATIONS, migrate


def fresh_schema() -> list[tuple[str, str, str]]:
    """(type, name, sql) of every schema object in a blank migrated store, in a stable order."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(str(Path(tmp) / "schema.sqlite"), isolation_level=None)
        migrate(conn, "1970-01-01T00:00:00.000000Z")
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'records_fts_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name"
        ).fetchall()
        conn.close()
    return rows


def render() -> str:
    lines = [
        "# Store schema",
        "",
        "Generated from a blank store by `python -m memory_core.docgen.schema_doc > docs/schema.md`; a test",
        "fails when it drifts from the migrations. What the tables mean is explained in docs/store.md.",
        "",
        "## Migrations",
        "",
    ]
    lines += [f"{number}. {name}" for number, (name, _) in sorted(MIGRATIONS.items())]
    lines.append("")
    current = None
    for kind, name, sql in fresh_schema():
        if kind != current:
            lines += [f"## {kind.capitalize()}s", ""]
            current = kind
        lines += [f"### `{name}`", "", "```sql", sql.strip(), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render())
