"""Small HTML builders for the notebook displays. Every value is escaped here.

Only the structure (tags and fixed class names) is written literally; anything that came from
data (memory content, entity names, queries, reasons, ids, numbers) passes through :func:`esc`.
Nothing emits a link, script, image or style attribute built from data.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CLIP = 2_000  # characters of one cell before it is shortened

STYLE = """<style>
.am-nb{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;line-height:1.4}
.am-nb table{border-collapse:collapse;margin:4px 0 10px 0}
.am-nb th,.am-nb td{border:1px solid rgba(127,127,127,.35);padding:2px 6px;text-align:left;vertical-align:top}
.am-nb th{background:rgba(127,127,127,.12)}
.am-nb .am-text{white-space:pre-wrap;max-width:60em}
.am-nb .am-muted{opacity:.7}
.am-nb .am-empty{border:2px solid #c0392b;background:rgba(192,57,43,.10);padding:6px 10px;margin:6px 0}
.am-nb .am-ok{border-left:4px solid #27ae60;padding:2px 8px;margin:6px 0}
.am-nb .am-warn{border-left:4px solid #e67e22;padding:2px 8px;margin:6px 0}
.am-nb .am-this{font-weight:bold}
.am-nb h4{margin:10px 0 4px 0}
</style>"""


def esc(value: Any) -> str:
    """Escaped text of ``value``; None becomes an empty string, floats are shortened."""
    if value is None:
        return ""
    if isinstance(value, float):
        value = f"{value:.4g}"
    elif not isinstance(value, str):
        value = text(value)
    return html.escape(value, quote=True)


def text(value: Any) -> str:
    """A compact plain-text form of a value (JSON for containers)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, default=str, ensure_ascii=False)
    return "" if value is None else str(value)


def clip(value: Any, limit: int = CLIP) -> str:
    """Plain text of ``value``, shortened to ``limit`` characters with a note of what was left out."""
    out = text(value)
    return out if len(out) <= limit else out[:limit] + f"… ({len(out) - limit} more characters)"


def cell(value: Any, *, long: bool = False) -> str:
    """One escaped table cell; ``long`` keeps line breaks and clips very long text."""
    if long:
        return f'<td class="am-text">{esc(clip(value))}</td>'
    return f"<td>{esc(value)}</td>"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *, long: Iterable[str] = (),
          empty: str = "(none)") -> str:
    """An HTML table of ``rows`` (dicts); columns default to the first row's keys."""
    if not rows:
        return f'<div class="am-muted">{esc(empty)}</div>'
    columns = list(columns or rows[0].keys())
    wide = set(long)
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell(row.get(c), long=c in wide) for c in columns) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def pairs(items: Mapping[str, Any] | Iterable[tuple[str, Any]], *, long: Iterable[str] = ()) -> str:
    """A two-column key/value table (values that are containers are shown as JSON)."""
    rows = list(items.items()) if isinstance(items, Mapping) else list(items)
    if not rows:
        return '<div class="am-muted">(none)</div>'
    wide = set(long)
    body = "".join(f"<tr><th>{esc(k)}</th>{cell(v, long=k in wide or not isinstance(v, (int, float, type(None))))}</tr>"
                   for k, v in rows)
    return f"<table>{body}</table>"


def heading(value: Any) -> str:
    return f"<h4>{esc(value)}</h4>"


def para(value: Any, kind: str = "") -> str:
    """A line of text; ``kind`` is one of the fixed classes (``empty``, ``ok``, ``warn``, ``muted``)."""
    css = f' class="am-{kind}"' if kind in ("empty", "ok", "warn", "muted") else ""
    return f"<div{css}>{esc(value)}</div>"


def details(summary: Any, body: str, *, open: bool = False) -> str:
    """A collapsible section; ``body`` must already be HTML built by these helpers."""
    return f"<details{' open' if open else ''}><summary>{esc(summary)}</summary>{body}</details>"


def page(*parts: str) -> str:
    """Wrap finished parts in the scoped container with the shared style."""
    return f'<div class="am-nb">{STYLE}{"".join(parts)}</div>'


def box(title: Any, *lines: Any, kind: str = "empty") -> str:
    """A bordered box with a bold title and escaped lines (the empty-search reason, a failed run)."""
    css = kind if kind in ("empty", "ok", "warn") else "warn"
    body = "".join(f"<br>{esc(line)}" for line in lines if line)
    return f'<div class="am-{css}"><strong>{esc(title)}</strong>{body}</div>'
