"""Procedural records (design section 3): a named, versioned procedure.

The record's ``content`` is the description (what the procedure is for; only it is embedded for
dense search) followed by the procedure spelled out for the model that reads it, its ``attribute`` is the normalised name (so a new version on the same subject
supersedes the old one), and the ``procedures`` row holds the name, the trigger (when it
applies), the steps and the known pitfalls. Lexical search indexes the name and the trigger.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInputError
from ..store.db import dumps, loads
from ..store.write_queries import insert_procedure, procedure_row

MAX_NAME = 120
MAX_TRIGGER = 500
MAX_ITEMS = 30
MAX_ITEM = 500


def _text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"procedure.{field} must be a non-empty string", field=f"procedure.{field}")
    if len(value) > limit:
        raise InvalidInputError(f"procedure.{field} is longer than {limit} characters", field=f"procedure.{field}")
    return value.strip()


def _items(value: Any, field: str, required: bool) -> list[str]:
    if value is None:
        value = []
    if not isinstance(value, list):
        raise InvalidInputError(f"procedure.{field} must be a list of strings", field=f"procedure.{field}")
    if required and not value:
        raise InvalidInputError(f"procedure.{field} needs at least one item", field=f"procedure.{field}")
    if len(value) > MAX_ITEMS:
        raise InvalidInputError(f"procedure.{field} has more than {MAX_ITEMS} items", field=f"procedure.{field}")
    return [_text(item, field, MAX_ITEM) for item in value]


def check_procedure(procedure: dict[str, Any]) -> dict[str, Any]:
    """The validated procedure (name, trigger, steps, pitfalls); InvalidInputError otherwise."""
    if not isinstance(procedure, dict):
        raise InvalidInputError("procedure must be an object", field="procedure")
    unknown = sorted(set(procedure) - {"name", "trigger", "steps", "pitfalls"})
    if unknown:
        raise InvalidInputError(f"unknown procedure fields: {', '.join(unknown)}", field="procedure")
    return {
        "name": _text(procedure.get("name"), "name", MAX_NAME),
        "trigger": _text(procedure.get("trigger"), "trigger", MAX_TRIGGER),
        "steps": _items(procedure.get("steps"), "steps", required=True),
        "pitfalls": _items(procedure.get("pitfalls"), "pitfalls", required=False),
    }


def embedding_text(content: str, procedure: dict[str, Any] | None) -> str:
    """What is embedded: the description (the content as written), never the rendered steps."""
    return content


def render(description: str, procedure: dict[str, Any] | None) -> str:
    """The stored content a model reads: the description, then the procedure spelled out."""
    if not procedure:
        return description
    lines = [description.strip(), f"Procedure: {procedure['name']}. When: {procedure['trigger']}", "Steps:"]
    lines += [f"{n}. {step}" for n, step in enumerate(procedure["steps"], 1)]
    if procedure["pitfalls"]:
        lines.append("Pitfalls:")
        lines += [f"- {pitfall}" for pitfall in procedure["pitfalls"]]
    return "\n".join(lines)


def store_procedure(conn, record_id: str, procedure: dict[str, Any]) -> None:
    """Insert the procedure row of a new procedural record version."""
    insert_procedure(conn, record_id, procedure["name"], procedure["trigger"], dumps(procedure["steps"]), dumps(procedure["pitfalls"]))


def load_procedure(conn, record_id: str) -> dict[str, Any] | None:
    """The procedure of a procedural record (None for records written without one)."""
    return procedure_from_row(procedure_row(conn, record_id))


def procedure_from_row(row) -> dict[str, Any] | None:
    """A procedure row (``name, trigger, steps, pitfalls``) as the dict :func:`load_procedure` returns."""
    if row is None:
        return None
    return {"name": row["name"], "trigger": row["trigger"], "steps": loads(row["steps"], []), "pitfalls": loads(row["pitfalls"], [])}
