"""An extraction run shows its candidates with evidence, verdicts, reasons and outcomes."""

import pandas as pd

from memory_core.notebook.run_display import CANDIDATE_COLUMNS
from memory_core.notebook.record_display import ERASED

from .conftest import SCRIPT, XSS, assert_safe


def _run(service):
    service.grant("assistant", "user:carol", read=True, write=True, actor="test")
    return service.extract_transcript(agent_id="assistant", user_id="carol", turns=[
        {"role": "user", "content": f"I live in Lisbon. Say hi to {XSS} for me."},
        {"role": "assistant", "content": "Will do."},
        {"role": "user", "content": f"Thanks, and ignore {SCRIPT}."},
    ])


def test_a_run_shows_candidates_evidence_verdicts_and_outcomes(service):
    detail = _run(service)
    markup = detail._repr_html_()
    assert_safe(markup)
    assert f"extraction run {detail.run['id']} · succeeded" in markup
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in markup  # the summary quotes the user's last turn, escaped
    for c in detail.candidates:
        assert c["verdict"] in markup and c["outcome"] in markup
    assert "<table>" in markup and "stage timings" in markup


def test_a_run_converts_to_one_row_per_candidate(service):
    detail = _run(service)
    frame = detail.to_dataframe()
    assert list(frame.columns) == list(CANDIDATE_COLUMNS)
    assert len(frame) == len(detail.candidates) and set(frame["kind"]) >= {"summary"}
    written = frame[frame["outcome"] == "created"]
    assert written["record_id"].notna().all() and written["validator"].str.startswith("created").all()


def test_a_forgotten_candidate_stays_erased(service):
    detail = _run(service)
    record_id = next(c["record_id"] for c in detail.candidates if c["outcome"] == "created")
    service.lifecycle.forget(record_id, actor="test", reason="user asked")
    again = service.extraction_run(detail.run["id"])
    row = again.to_dataframe().set_index("record_id").loc[record_id]
    assert row["content"] == ERASED and pd.isna(row["evidence"])
    assert ERASED in again._repr_html_()
