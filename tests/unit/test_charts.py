from memory_core import charts


def test_generator_ranks_come_from_the_trace_even_for_an_empty_answer():
    trace = {"stages": [
        {"name": "dense", "outputs": {"candidates": [{"id": "mem_a", "rank": 1, "cosine": 0.31}]}},
        {"name": "lexical", "outputs": {"candidates": [{"id": "mem_a", "rank": 2, "bm25": 3.2}, {"id": "mem_b", "rank": 1, "bm25": 4.0}]}},
        {"name": "gate", "outputs": {"passed": []}},
    ]}
    rows = charts.generator_rows_from_trace(trace)
    assert rows == [
        {"record_id": "mem_a", "generator": "dense", "rank": 1, "score": 0.31},
        {"record_id": "mem_a", "generator": "lexical", "rank": 2, "score": 3.2},
        {"record_id": "mem_b", "generator": "lexical", "rank": 1, "score": 4.0},
    ]
    fig = charts.generator_ranks_figure(rows)
    assert [t.name for t in fig.data] == ["dense", "lexical"]


def test_labels_from_data_are_html_escaped():
    fig = charts.stage_latency_figure({"<b>x</b>": 1.5})
    assert fig.data[0].y[0] == "&lt;b&gt;x&lt;/b&gt;"
    fig = charts.generator_ranks_figure([{"record_id": "<a href=javascript:x>", "generator": "dense", "rank": 1, "score": 0.5}])
    assert "<a" not in fig.data[0].x[0]


def test_every_figure_handles_no_data():
    for fig in (charts.generator_ranks_figure([]), charts.stage_latency_figure({}), charts.latency_histogram_figure([]),
                charts.records_over_time_figure([])):
        assert fig.layout.annotations


def test_store_composition_has_four_panels():
    stats = {"by_type": {"semantic": 3}, "by_status": {"confirmed": 2, "provisional": 1}, "by_scope_kind": {"user": 3},
             "by_source_kind": {"user_statement": 3}}
    assert len(charts.store_composition_figure(stats).data) == 4
    assert charts.stage_rows([{"name": "dense", "ms": 2}, ("lexical", 1.0)]) == [("dense", 2.0), ("lexical", 1.0)]
