from admin_ui.views.search_charts import plain, scores_figure, snippet


def test_labels_are_snippets_escaped_and_each_generator_has_its_own_axis():
    rows = [{"record_id": "mem_1", "generator": "dense", "rank": 1, "score": 0.8},
            {"record_id": "mem_1", "generator": "lexical", "rank": 1, "score": 7.5},
            {"record_id": "mem_2", "generator": "dense", "rank": 2, "score": 0.4}]
    contents = {"mem_1": "<a href=javascript:x>click</a> $x$ " + "long " * 20}
    data = scores_figure(rows, contents).to_dict()
    labels = [y for trace in data["data"] for y in trace["y"]]
    assert all("<a" not in label and "$" not in label for label in labels)
    assert "mem_2" in labels  # no content: its id
    assert {trace["xaxis"] for trace in data["data"]} == {"x", "x2"}  # a separate axis per generator
    assert data["layout"]["xaxis"]["range"] == [0, 1]


def test_snippet_and_plain():
    assert snippet(None, "mem_9") == "mem_9"
    assert snippet("a  b\nc", "m") == "a b c"
    assert len(snippet("x" * 100, "m")) == 42
    assert plain("<b>&") == "&lt;b&gt;&amp;"
