"""Small Streamlit building blocks shared by the pages: safe text, pagination, reasons, messages.

Memory content, entity names, queries and reasons are untrusted. They are shown only through
``st.text``, ``st.code``, ``st.json`` or dataframes, which render text literally. Anything
dynamic that must sit inside a markdown-rendered element (captions, messages) goes through
:func:`md_escape` first.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from memory_core.errors import MemoryCoreError

from ..data.actions import REASON_LIMIT, reason_problem
from ..data.pagination import Page
from .export import csv_bytes
from .timefmt import GRID_FORMAT, TIME_ZONE

_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:")


# Streamlit's markdown turns " -- " into an em dash and "->", "<-", "<->", ">=", "<=", "~=" into
# arrows and signs, on text nodes after escapes are resolved, so backslashes cannot stop it. An
# invisible word joiner between the two characters keeps them literal on screen.
WORD_JOINER = "\u2060"
_TYPOGRAPHY_PAIRS = ("--", "->", "<-", ">=", "<=", "~=")


def _break_typography(text: str) -> str:
    for pair in _TYPOGRAPHY_PAIRS:
        while pair in text:
            text = text.replace(pair, pair[0] + WORD_JOINER + pair[1])
    return text


def md_escape(text: object) -> str:
    """Make dynamic text render literally inside markdown elements: markdown characters are
    backslash-escaped and Streamlit's typographic replacements are defused."""
    plain = _break_typography(str(text))
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in plain).replace("\n", " ")


def labeller(labels: dict):
    """A ``format_func`` showing ``labels[option]`` (bound to this dict, not to a variable name)."""
    return lambda option: str(labels.get(option, option))


def content_block(text: str | None) -> None:
    """Show record content (or any untrusted text) literally."""
    if text is None or text == "":
        st.caption("(empty)")
        return
    st.code(text, language=None, wrap_lines=True)


TIME_COLUMNS = ("at", "created_at", "updated_at", "started_at", "ended_at", "finished_at", "valid_from",
                "valid_until", "review_at", "expires_at", "event_at", "review flagged at", "flagged_at",
                "last_used_at", "revoked_at", "recorded_at", "decided_at")


def _time_config(frame: pd.DataFrame, column_config: dict) -> tuple[pd.DataFrame, dict]:
    """Show stored ISO timestamps as readable dates in the app's one format (:mod:`.timefmt`), the
    header naming the time zone; the exact ISO value is in the column's help and the CSV."""
    for column in frame.columns:
        if column in TIME_COLUMNS and column not in column_config:
            parsed = pd.to_datetime(frame[column], utc=True, errors="coerce", format="ISO8601")
            if parsed.notna().sum() == frame[column].notna().sum():
                frame[column] = parsed
                column_config[column] = st.column_config.DatetimeColumn(
                    f"{column} ({TIME_ZONE})", format=GRID_FORMAT, timezone=TIME_ZONE,
                    help=f"{TIME_ZONE}. Open the row for the exact ISO 8601 value, or download the CSV.")
    return frame, column_config


def table(rows: list[dict[str, Any]] | pd.DataFrame, key: str, *, empty: str = "Nothing to show.",
          select: bool | str = False, height: int | None = None, column_config: dict | None = None,
          csv: bool = False):
    """A dataframe (cells render as text, sortable by any column, timestamps readable).

    ``select=True`` lets several rows be picked, ``select="single"`` one (a click opens it); both
    return the selected row indices. ``csv`` adds a button that downloads exactly the rows shown,
    spreadsheet-safe (:func:`admin_ui.views.export.csv_bytes`).
    """
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    if frame.empty:
        st.info(empty)
        return []
    frame = frame.map(lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v)
    raw = frame.copy()
    frame, config = _time_config(frame, dict(column_config or {}))
    # The widget's key carries a generation that clear_selection bumps: a new widget has no tick,
    # so after an action no row stays ticked that the data has moved under.
    generation = st.session_state.get(f"{key}__generation", 0)
    widget_key = f"{key}__{generation}" if generation else key
    kwargs: dict[str, Any] = {"hide_index": True, "width": "stretch", "key": widget_key}
    if height:
        kwargs["height"] = height
    if config:
        kwargs["column_config"] = config
    with st.container(key=f"{key}_box"):  # a stable .st-key-… hook for the browser tests
        if select:
            mode = "single-row" if select == "single" else "multi-row"
            event = st.dataframe(frame, on_select="rerun", selection_mode=mode, **kwargs)
            picked = list(event.selection.rows) if event and event.selection else []
        else:
            st.dataframe(frame, **kwargs)
            picked = []
    if csv:
        st.download_button("Download these rows (CSV)", csv_bytes(raw),
                           file_name=f"{key}.csv", mime="text/csv", key=f"{key}_csv", type="tertiary",
                           icon=":material/download:")
    return picked


def clear_selection(table_key: str, *selection_keys: str) -> None:
    """After an action changed the data: untick table ``table_key`` and drop the choices it fed.

    A dataframe keeps its ticked row *index* across reruns, so once a record leaves the list the
    tick would sit on whichever record moved into that row while the detail pane still showed the
    old one. Called before ``st.rerun()``, the next run draws a fresh table with no tick and the
    pickers ``selection_keys`` empty (set by :func:`show_flash`, which every page calls before its
    widgets); the flash message says what was done.
    """
    st.session_state[f"{table_key}__generation"] = st.session_state.get(f"{table_key}__generation", 0) + 1
    st.session_state.pop(f"{table_key}__last_pick", None)
    # Set to None on the next run, before the pickers are drawn: a key merely removed leaves the
    # browser showing the old choice (its text included) while the script thinks nothing is chosen.
    st.session_state.setdefault(_CLEAR_KEY, []).extend(selection_keys)


def clicked_row(key: str, picked: list[int]) -> int | None:
    """The row index a click just selected in table ``key`` (None if the selection did not change)."""
    last_key = f"{key}__last_pick"
    current = picked[0] if picked else None
    if st.session_state.get(last_key) == current:
        return None
    st.session_state[last_key] = current
    return current


def permalink(name: str, value: str | None) -> None:
    """Keep ``?name=value`` in the address bar (a link to what is open); None removes it."""
    if value:
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    elif name in st.query_params:
        del st.query_params[name]


def page_number(key: str, signature: object = None) -> int:
    """The current page of list ``key``; back to page 1 when the filter ``signature`` changes."""
    sig_key = f"{key}__sig"
    if signature is not None and st.session_state.get(sig_key) != repr(signature):
        st.session_state[sig_key] = repr(signature)
        st.session_state[f"{key}_page"] = 1
    return int(st.session_state.get(f"{key}_page", 1))


def pager(key: str, page: Page, noun: str = "rows") -> None:
    """Page controls under a list (the page number widget is ``{key}_page``)."""
    st.session_state[f"{key}_page"] = page.page
    cols = st.columns([3, 1])
    cols[0].caption(md_escape(page.caption(noun)))
    if page.pages > 1:
        cols[1].number_input("Page", min_value=1, max_value=page.pages, step=1, key=f"{key}_page",
                             label_visibility="collapsed")


def reason_fields(key: str, *, destructive: bool = False, confirm_text: str | None = None) -> tuple[str, bool]:
    """Inside a form: the reason box and, for destructive actions, a confirmation checkbox."""
    # No max_chars: the browser would silently drop a longer paste; check_reason names the limit.
    reason = st.text_input("Reason (kept in the audit log)", key=f"{key}_reason",
                           help=f"Up to {REASON_LIMIT:,} characters.")
    confirmed = True
    if destructive:
        confirmed = st.checkbox(confirm_text or "I understand this cannot be undone", key=f"{key}_confirm")
    return reason, confirmed


_RESET_KEY = "_reset_pending"
_CLEAR_KEY = "_clear_pending"


def reset_fields(*keys: str) -> None:
    """Empty the named widgets on the next run (a form after success, so the next use starts blank).

    A widget's value can only be set before it is drawn, so the keys are remembered here and
    emptied by :func:`show_flash`, which every page calls before its widgets.
    """
    st.session_state.setdefault(_RESET_KEY, []).extend(keys)


def _apply_resets() -> None:
    for name in st.session_state.pop(_CLEAR_KEY, []):
        st.session_state[name] = [] if isinstance(st.session_state.get(name), list) else None
    for name in st.session_state.pop(_RESET_KEY, []):
        current = st.session_state.get(name)
        if isinstance(current, bool):
            st.session_state[name] = False
        elif isinstance(current, str):
            st.session_state[name] = ""
        elif isinstance(current, list):
            st.session_state[name] = []
        elif name in st.session_state:
            st.session_state[name] = None


def check_reason(reason: str, confirmed: bool) -> bool:
    """Show why a submitted action was not run; True when it may go ahead."""
    problem = reason_problem(reason)
    if problem:
        st.error(md_escape(problem))
        return False
    if not confirmed:
        st.error("Tick the confirmation box to go ahead.")
        return False
    return True


def check_first(*problems: str | None) -> bool:
    """Show the first of a form's problems, in the order its fields are drawn; True when there is none."""
    for problem in problems:
        if problem:
            st.error(md_escape(problem))
            return False
    return True


def flash(message: str, kind: str = "success") -> None:
    """A message shown once at the top of the next run (survives ``st.rerun``)."""
    st.session_state.setdefault("_flash", []).append((kind, message))


def show_flash() -> None:
    """Show the messages of the last action, and empty the forms it asked to reset."""
    _apply_resets()
    for kind, message in st.session_state.pop("_flash", []):
        getattr(st, kind)(md_escape(message))


def show_error(exc: Exception) -> None:
    """A core error as the user should read it: its message (and code), escaped."""
    if isinstance(exc, MemoryCoreError):
        st.error(f"{md_escape(exc.message)} ({exc.code})")
    else:
        st.error(md_escape(f"{type(exc).__name__}: {exc}"))


def read_only_note(identity, what: str) -> None:
    st.caption(md_escape(f"Your role ({identity.role}) cannot {what}; this view is read-only."))


def empty_state(message: str, hint: str | None = None) -> None:
    st.info(message + (f"\n\n{hint}" if hint else ""))
