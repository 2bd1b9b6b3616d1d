from admin_ui.data import overview
from admin_ui.views import dashboard


def test_reason_classes_group_equal_causes():
    assert overview.reason_class("best cosine 0.13 < floor 0.42; no lexical match") == "best cosine N < floor N"
    assert overview.reason_class("best cosine 0.24 < floor 0.42") == "best cosine N < floor N"
    assert overview.reason_class("no record passes the hard filter (scopes a, b)") == "no record passes the hard filter"
    assert overview.reason_class("") == "no reason recorded"


def test_percentiles_interpolate():
    assert overview.percentile([], 0.5) == 0.0
    assert overview.percentile([10.0], 0.95) == 10.0
    assert overview.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert abs(overview.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) - 4.8) < 1e-9


def test_dashboard_data_from_a_store(service, alice):
    alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes tea.", "attribute": "drink"})
    service.search(agent_id="assistant", user_id="alice", query="tea")
    service.search(agent_id="assistant", user_id="alice", query="zzzz qqqq unrelated")
    per_day = overview.searches_per_day_data(service)
    assert sum(r["searches"] for r in per_day) == 2
    empties = overview.empty_reasons_data(service)
    assert empties["searches"] == 2 and 0 <= empties["empty"] <= 2
    composition = overview.composition_over_time_data(service)
    assert composition and composition[-1]["records"] >= 1
    backlog = overview.review_backlog_data(service)
    assert backlog == [{"scope": "user:alice", "provisional": 1, "review_due": 0}]
    for figure in (dashboard.composition_over_time_figure(composition), dashboard.searches_per_day_figure(per_day),
                   dashboard.empty_reasons_figure(empties), dashboard.review_backlog_figure(backlog),
                   dashboard.extraction_outcomes_figure(overview.extraction_outcomes_data(service))):
        assert figure.to_dict()["data"] or figure.to_dict()["layout"]


def test_labels_are_escaped_for_plotly():
    figure = dashboard.review_backlog_figure([{"scope": "user:<b>x</b>", "provisional": 1, "review_due": 0}])
    assert "<b>" not in str(figure.to_dict()["data"][0]["x"])
