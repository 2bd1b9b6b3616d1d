"""Search responses, results, explanations, traces and stages display escaped HTML and convert
to pandas; an empty response leads with the gate's reason."""

import html

from memory_core.notebook.search_display import RESULT_COLUMNS

from .conftest import XSS, assert_safe


def test_a_response_shows_its_results_and_why(hit, hostile):
    markup = hit._repr_html_()
    assert_safe(markup)
    assert "1 result(s)" in markup or f"{len(hit.results)} result(s)" in markup
    assert hostile.new_id in markup and "passed: the result set passes on" in markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in markup  # the query and the entity name, escaped
    assert "No memory returned" not in markup


def test_an_empty_response_leads_with_the_gate_reason(empty):
    markup = empty._repr_html_()
    assert_safe(markup)
    assert empty.empty_reason
    box = markup.index("No memory returned")
    assert box < markup.index("gate and candidates") and html.escape(empty.empty_reason) in markup[box:box + 1000]
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in markup  # the query, escaped


def test_a_response_converts_to_one_row_per_result(hit, empty, hostile):
    frame = hit.to_dataframe()
    assert list(frame.columns) == list(RESULT_COLUMNS)
    assert frame.loc[0, "record_id"] == hostile.new_id and XSS in frame.loc[0, "content"]  # raw text in pandas
    nothing = empty.to_dataframe()
    assert nothing.empty and list(nothing.columns) == list(RESULT_COLUMNS)
    assert nothing.attrs["empty_reason"] == empty.empty_reason


def test_a_result_and_its_explanation_display_on_their_own(hit):
    result = hit.results[0]
    for obj in (result, result.explanation):
        markup = obj._repr_html_()
        assert_safe(markup)
        assert result.record_id in markup and "gate" in markup
        assert obj.to_dataframe().loc[0, "record_id"] == result.record_id


def test_a_logged_response_without_text_says_so(hit, hostile):
    logged = hostile.service.load_search(hit.search_id)
    markup = logged._repr_html_()
    assert "opened from the search log" in markup
    assert_safe(markup)


def test_the_trace_lists_every_stage_in_order(empty):
    markup = empty.trace._repr_html_()
    assert_safe(markup)
    frame = empty.trace.to_dataframe()
    assert list(frame["stage"]) == [s.name for s in empty.trace.stages]
    gate_row = frame[frame["stage"] == "gate"].iloc[0]
    assert gate_row["dropped"] >= 1


def test_a_stage_shows_inputs_outputs_drops_and_time(empty, hostile):
    gate = empty.trace.stage("gate")
    markup = gate._repr_html_()
    assert_safe(markup)
    assert "stage gate" in markup and "ms" in markup and "cosine_floor" in markup
    assert f"dropped here: {len(gate.dropped)}" in markup
    for dropped in gate.dropped:
        assert dropped["id"] in markup
    frame = gate.to_dataframe()
    drops = frame[frame["output"] == "dropped"]
    assert set(drops["record_id"]) == {d["id"] for d in gate.dropped} and drops["reason"].str.startswith("gate:").all()


def test_a_stage_with_query_text_in_its_inputs_is_escaped(empty):
    for stage in empty.trace.stages:
        assert_safe(stage._repr_html_())


def test_a_stage_that_handles_no_records_gives_key_value_rows(hit):
    frame = hit.trace.stage("scope_resolution").to_dataframe()
    assert list(frame.columns) == ["side", "key", "value"]
    assert {"agent_id", "user_id", "readable"} <= set(frame["key"])
    dense = hit.trace.stage("dense").to_dataframe()
    assert list(dense.columns[:3]) == ["record_id", "output", "reason"] and set(dense["output"]) == {"candidates"}
