"""The design's scenario categories, run against the real packaged embedder.

Each scenario under seed_data/scenarios/ is a small world driven through the tool surface and
judged from the write and search logs (memory_core/eval/scenarios.py). One model load serves the
whole module; each scenario gets its own fresh store.
"""

import pytest

from memory_core.eval.scenarios import ScenarioRunner, format_table, load_scenarios

SCENARIOS = load_scenarios()


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    from memory_core import load_settings
    from memory_core.service import shared_embedder

    settings = load_settings(extraction={"extract_on_session_end": False})
    return ScenarioRunner(tmp_path_factory.mktemp("scenarios"), embedder=shared_embedder(settings.embedder), settings=settings)


@pytest.fixture(scope="module")
def results():
    collected = {}
    yield collected
    if collected:
        print("\n" + format_table(list(collected.values())))


@pytest.mark.model
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(scenario, runner, results):
    result = runner.run(scenario)
    results[scenario.id] = result
    assert result.error is None, result.error
    failed = [f"step {c.step}: {c.what} ({c.detail})" for c in result.failures()]
    assert not failed, f"{scenario.id} ({scenario.category}):\n" + "\n".join(failed)
