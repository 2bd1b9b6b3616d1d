"""The service's store summary, and the notebook figures: the admin app's charts on the same data."""

from admin_ui.data import overview
from admin_ui.data import search as explorer
from memory_core import charts
from memory_core.notebook import figures

from .conftest import assert_safe


def test_the_service_shows_a_store_summary(hostile):
    service = hostile.service
    markup = service._repr_html_()
    assert_safe(markup)
    stats = service.stats()
    assert f"{stats['records']} records" in markup and "test/hashing-embedder" in markup
    frame = service.to_dataframe()
    assert list(frame.columns) == ["group", "value", "records"]
    by_status = frame[frame["group"] == "status"].set_index("value")["records"].to_dict()
    assert by_status == stats["by_status"]


def test_search_figures_are_the_explorers_charts(hit, empty):
    for response in (hit, empty):
        rows = explorer.generator_rows(response)
        assert figures.ranks_figure(response) == charts.generator_ranks_figure(rows, "rank")
        assert figures.scores_figure(response) == charts.generator_ranks_figure(rows, "score", figures.SCORE_TITLE)
        assert figures.latency_figure(response) == charts.stage_latency_figure(response.trace.work_timings())  # each stage's own work
        assert figures.latency_figure(response.trace) == figures.latency_figure(response)
    assert [t.name for t in figures.ranks_figure(empty).data]  # an empty answer still had candidates to plot


def test_store_figures_are_the_overview_charts(hostile):
    service = hostile.service
    assert figures.composition_figure(service) == charts.store_composition_figure(service.stats())
    assert figures.records_over_time_figure(service) == charts.records_over_time_figure(overview.records_over_time(service))
    assert figures.search_latency_figure(service) == charts.latency_histogram_figure(overview.search_latencies(service))


def test_the_extraction_figure_is_the_extraction_pages_chart(service):
    service.grant("assistant", "user:carol", read=True, write=True, actor="test")
    detail = service.extract_transcript(agent_id="assistant", user_id="carol", turns=[{"role": "user", "content": "I live in Lisbon."}])
    stages = detail.attempts[-1]["stages"]
    assert stages
    assert figures.extraction_stages_figure(detail) == charts.stage_latency_figure(stages, "Extraction stages")
