"""Render docs/schema.md from a freshly migrated database: ``python -m memory_core.docgen.schema_doc``."""

from __future__ import annotations

import sys

from ..store.migrations import MIGRATIONS
from ..store.probes import fresh_schema


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
