"""Render docs/settings.md from the settings model: ``python -m memory_core.docgen.settings_doc``."""

from __future__ import annotations

import sys

from pydantic import BaseModel

from ..settings import Settings


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows.extend(_rows(annotation, f"{prefix}{name.upper()}__"))
            continue
        default = field.get_default(call_default_factory=True)
        default_text = "unset" if default is None else f"`{default}`"
        description = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{prefix}{name.upper()}` | {default_text} | {description} |")
    return rows


def render() -> str:
    lines = [
        "# Settings",
        "",
        "Generated from `memory_core/settings/` by `python -m memory_core.docgen.settings_doc > docs/settings.md`;",
        "a test fails when this page and the model drift apart.",
        "",
        "Build settings in code with `memory_core.load_settings(**overrides)` (nested sections as dicts, e.g.",
        "`load_settings(retrieval={'cosine_floor': 0.35})`) or from the environment with the variables below.",
        "`ANTHROPIC_API_KEY` is read as a fallback for `MEMORY_ANTHROPIC__API_KEY`.",
        "`memory_core.settings.default_settings(**overrides)` builds the same model from the defaults alone,",
        "ignoring the environment (the test fixtures use it, so a developer's shell cannot change a test).",
        "",
    ]
    for name, field in Settings.model_fields.items():
        section = field.annotation
        lines += [f"## `{name}` — {field.description}", "", "| variable | default | meaning |", "|---|---|---|"]
        lines += _rows(section, f"MEMORY_{name.upper()}__")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render())
