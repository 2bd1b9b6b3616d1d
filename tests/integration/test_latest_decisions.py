"""Several dated decisions on one topic: a question about what holds now gets the newest first.

The worlds are hand-written (tests/data/latest_decisions: written before any score was seen;
tests/data/latest_decisions_second: written before the recency test was extended) and run through
the real pipeline with the packaged MiniLM. They pin the episodic freshness default of issue 31
(weight 0.3 for recency questions, half-life 90 days; docs/calibration.md): the searches it puts
right are ordinary checks, the ones it does not (gate empties, no recency word, a same-day record,
a weight too small for the fused gap) are marked ``known_gap`` with their cause, and the table
says when one starts passing. The controls ask for an older decision by its details and must keep
getting it.
"""

from pathlib import Path

import pytest

from memory_core.eval.scenarios import ScenarioRunner, format_table, load_scenarios

DATA = Path(__file__).resolve().parents[1] / "data"
WORLDS = load_scenarios(DATA / "latest_decisions") + load_scenarios(DATA / "latest_decisions_second")
# searches the shipped freshness puts right that come out wrong with freshness off (weight 0)
FRESHNESS_MAKES_RIGHT = {
    "What's the latest on Cobalt Pro pricing?",
    "What price did we settle on for Cobalt Pro?",
    "What did I decide most recently about the summer trip?",
    "What's our final decision on the Ember payment provider?",
    "Are we still on Adyen for Ember?",
}


def _settings(**retrieval):
    from memory_core import load_settings

    return load_settings(extraction={"extract_on_session_end": False}, retrieval=retrieval)


@pytest.fixture(scope="module")
def embedder():
    from memory_core.service import shared_embedder

    return shared_embedder(_settings().embedder)


@pytest.fixture(scope="module")
def results():
    collected = {}
    yield collected
    if collected:
        print("\n" + format_table(list(collected.values())))


def _top_checks(world, result) -> dict[str, bool]:
    """Query -> whether its first result was the expected record."""
    out = {}
    for check in result.checks:
        if check.what.startswith("top result"):
            out[world.steps[check.step - 1]["tool"]["args"]["query"]] = check.ok
    return out


@pytest.mark.model
@pytest.mark.parametrize("world", WORLDS, ids=[w.id for w in WORLDS])
def test_the_newest_decision_comes_first_and_older_ones_stay_findable(world, embedder, results, tmp_path):
    runner = ScenarioRunner(tmp_path, embedder=embedder, settings=_settings())
    assert runner.settings.retrieval.freshness_weight == 0.3
    result = runner.run(world)
    results[world.id] = result
    assert result.error is None, result.error
    failed = [f"step {c.step}: {c.what} ({c.detail})" for c in result.failures()]
    assert not failed, f"{world.id}:\n" + "\n".join(failed)


@pytest.mark.model
def test_the_shipped_freshness_is_what_puts_them_first(embedder, tmp_path):
    """With freshness off the same searches rank an older decision first: the default is measured, not decorative."""
    shipped = ScenarioRunner(tmp_path / "shipped", embedder=embedder, settings=_settings())
    off = ScenarioRunner(tmp_path / "off", embedder=embedder, settings=_settings(freshness_weight=0.0))
    with_it, without = {}, {}
    for world in WORLDS:
        with_it.update(_top_checks(world, shipped.run(world)))
        without.update(_top_checks(world, off.run(world)))
    assert {q for q in FRESHNESS_MAKES_RIGHT if with_it[q] and not without[q]} == FRESHNESS_MAKES_RIGHT
    assert [q for q, ok in without.items() if ok and not with_it[q]] == []  # nothing it gets right is lost
