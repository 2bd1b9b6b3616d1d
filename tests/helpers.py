"""Helpers shared by every test folder (one copy, imported, never pasted into a test file)."""

from __future__ import annotations


def write_result(session, content: str | None = None, **args) -> dict:
    """memory_write through the session's tool surface; asserts it succeeded and returns the result.

    ``type`` defaults to ``semantic``; ``content`` may be given positionally or as a keyword.
    """
    if content is not None:
        args["content"] = content
    args.setdefault("type", "semantic")
    result = session.call_tool("memory_write", args)
    assert result["ok"], result
    return result


def write(session, content: str | None = None, **args) -> str:
    """Like :func:`write_result`, returning only the new (or reinforced) record's id."""
    return write_result(session, content, **args)["record_id"]
