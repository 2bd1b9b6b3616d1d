from admin_ui.data import overview
from admin_ui.views import dashboard


def test_reason_classes_group_equal_causes():
    weak = "weak match: below the relevance floors"
    assert overview.reason_class("best cosine 0.13 < floor 0.42; no lexical match") == weak
    assert overview.reason_class("best cosine 0.24 < floor for unknown names 0.55; best lexical score 0.20 < floor 0.75") == weak
    assert overview.reason_class("no dense candidate; best lexical score 0.10 < floor 0.75; no entity match") == weak
    assert overview.reason_class("0 readable records: agent s has no read grant on user:a; agent:s/a holds no "
                                 "provisional/confirmed record") == "no readable record (grants, status or type)"
    assert overview.reason_class("no record in the readable scopes passes the hard filter (scopes a, b)") == \
        "no readable record (grants, status or type)"
    assert overview.reason_class("the event-time window (from 2026-01-01 to any) removed 13 readable record(s) before "
                                 "ranking; of the rest, best cosine 0.07 < floor 0.40") == "From/To window removed the records"
    assert overview.reason_class("all 2 candidates filtered as superseded (2 superseded); historical search includes them") \
        == "only superseded or expired records matched"
    assert overview.reason_class("mentions bob, but nothing about the rest of the question (x 0.1 < 0.3)") == \
        "a known name, nothing on the rest"
    assert overview.reason_class("budget 0 of 10 tokens (limit 3)") == "budget N of N tokens"  # no known kind
    assert overview.reason_class("") == "no reason recorded"


def test_the_empty_reasons_chart_wraps_its_labels_and_keeps_its_ticks_apart():
    data = {"searches": 90, "empty": 67, "rate": 0.7, "reasons": [
        {"reason": "no readable record (grants, status or type)", "searches": 60, "example": "0 readable records: <b>x</b>"},
        {"reason": "weak match: below the relevance floors", "searches": 7, "example": "best cosine 0.1 < floor 0.4"}]}
    figure = dashboard.empty_reasons_figure(data).to_dict()
    labels = figure["data"][0]["y"]
    assert all(len(line) <= 26 for label in labels for line in label.split("<br>"))
    assert "<b>" not in str(figure["data"][0]["hovertext"])
    layout = figure["layout"]
    assert layout["yaxis"]["automargin"] is True and "dtick" not in layout["xaxis"] and layout["xaxis"]["nticks"] <= 6


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
