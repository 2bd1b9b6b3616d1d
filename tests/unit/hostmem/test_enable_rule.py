"""Host-issued memory starts only with a passing fitness result for exactly what the host runs."""

from __future__ import annotations

import dataclasses
import json

import pytest

from memory_core.errors import HostMemoryNotQualifiedError
from memory_core.hostmem import FITNESS_COMMAND, fitness_results, open_host_memory, require_fitness, run_fitness
from memory_core.hostmem.bundle import load_bundle
from memory_core.hostmem.fitness import fingerprint
from memory_core.service import MemoryService
from memory_core.settings import default_settings
from tests.fakes import HashingEmbedder


def enabled(**host):
    return default_settings(host_memory={"enabled": True, **host})


@pytest.fixture
def host(tmp_path, clock):
    svc = MemoryService.open(tmp_path / "host.sqlite", enabled(), clock=clock, embedder=HashingEmbedder())
    yield svc
    svc.close()


def test_enabling_without_a_fitness_result_is_refused_with_the_command(host):
    with pytest.raises(HostMemoryNotQualifiedError) as caught:
        open_host_memory(host, "hybrid")
    error = caught.value
    assert error.code == "host_memory_not_qualified"
    assert FITNESS_COMMAND in error.message and str(host.store.path) in error.details["command"]
    assert "no fitness result" in error.message
    assert error.to_dict()["details"]["bundle_version"] == load_bundle().version


def test_off_or_other_modes_need_no_result(tmp_path, clock):
    with MemoryService.open(tmp_path / "off.sqlite", default_settings(), clock=clock, embedder=HashingEmbedder()) as svc:
        assert open_host_memory(svc, "hybrid") is None  # off by default
    with MemoryService.open(tmp_path / "on.sqlite", enabled(), clock=clock, embedder=HashingEmbedder()) as svc:
        assert open_host_memory(svc, "auto") is None and open_host_memory(svc, "tool_only") is None


def test_a_passing_run_is_recorded_and_unlocks_it(host):
    result = run_fitness(host, actor="test")
    assert result.passed, result.failures
    (row,) = fitness_results(host)
    assert row["passed"] and row["fingerprint"] == result.fingerprint == fingerprint(host, load_bundle().version)
    assert row["bundle_version"] == load_bundle().version and row["decider"] == "offline-rules"
    assert row["embed_model"] == HashingEmbedder.model_name and row["actor"] == "test"
    assert set(row["metrics"]["splits"]) == {"tune", "tune_b", "report"}
    assert open_host_memory(host, "hybrid") is not None
    assert require_fitness(host)["id"] == result.id


def test_changed_settings_embedder_or_bundle_are_refused_again(host, tmp_path, clock):
    run_fitness(host)
    path = host.store.path
    host.close()
    # a setting that shapes a decision
    with MemoryService.open(path, enabled(min_cosine=0.5), clock=clock, embedder=HashingEmbedder()) as svc:
        with pytest.raises(HostMemoryNotQualifiedError, match="host_memory.min_cosine"):
            open_host_memory(svc, "hybrid")
    # a retrieval setting (it changes what a gap search finds)
    settings = default_settings(host_memory={"enabled": True}, retrieval={"cosine_floor": 0.3})
    with MemoryService.open(path, settings, clock=clock, embedder=HashingEmbedder()) as svc:
        with pytest.raises(HostMemoryNotQualifiedError, match="retrieval.cosine_floor"):
            open_host_memory(svc, "hybrid")

    class OtherEmbedder(HashingEmbedder):
        model_name = "test/another-embedder"

    with MemoryService.open(path, enabled(), clock=clock, embedder=OtherEmbedder(), allow_embedder_mismatch=True) as svc:
        with pytest.raises(HostMemoryNotQualifiedError, match="embed_model"):
            open_host_memory(svc, "hybrid")
    with MemoryService.open(path, enabled(), clock=clock, embedder=HashingEmbedder()) as svc:
        assert open_host_memory(svc, "hybrid") is not None  # back to what was measured
        newer = dataclasses.replace(load_bundle(), version="hostmem-fitness-test-next")
        with pytest.raises(HostMemoryNotQualifiedError, match="bundle_version"):
            require_fitness(svc, newer)


def test_the_enable_switch_itself_is_not_in_the_fingerprint(host, tmp_path, clock):
    with MemoryService.open(tmp_path / "other.sqlite", default_settings(), clock=clock, embedder=HashingEmbedder()) as off:
        assert fingerprint(off, "v") == fingerprint(host, "v")


def test_a_failing_run_is_recorded_and_does_not_unlock(host):
    bundle = load_bundle()
    strict = dataclasses.replace(bundle, thresholds={**bundle.thresholds, "min_conditional_recall": 1.01})
    result = run_fitness(host, bundle=strict)
    assert not result.passed and any("conditional recall" in f for f in result.failures)
    assert fitness_results(host)[0]["passed"] is False
    with pytest.raises(HostMemoryNotQualifiedError, match="failed"):
        require_fitness(host, strict)


def test_a_malformed_bundle_is_refused_and_nothing_is_recorded(host, tmp_path):
    from memory_core.errors import InvalidInputError

    data = json.loads(open(load_bundle.__globals__["default_bundle_path"]()).read())
    data["splits"] = {"report": data["splits"]["report"]}
    bad = tmp_path / "bundle.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidInputError, match="two splits"):
        run_fitness(host, bundle_path=bad)
    data["splits"] = {"a": [{"id": "x", "kind": "conditional", "user": "alice", "turn": "hi", "expect": ["nope"]}], "report": []}
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidInputError, match="unknown records"):
        run_fitness(host, bundle_path=bad)
    bad.write_text("{not json")
    with pytest.raises(InvalidInputError):
        run_fitness(host, bundle_path=bad)
    assert fitness_results(host) == []


def test_cli_fitness_run_and_show(tmp_path, monkeypatch, capsys):
    from memory_core import cli

    import memory_core.hostmem.fitness_cli as fitness_cli

    def open_with_hashing(args, read_only=False):  # the command's own opener, with the unit tests' small embedder
        return MemoryService.open(args.path, default_settings(host_memory={"enabled": True}), embedder=HashingEmbedder(),
                                  read_only=read_only)

    monkeypatch.setattr(fitness_cli, "_open", open_with_hashing)
    path = str(tmp_path / "cli.sqlite")
    assert cli.main(["fitness", "show", "--path", path]) == 1  # show only looks: it creates no store
    assert "no store at" in capsys.readouterr().err and not (tmp_path / "cli.sqlite").exists()
    MemoryService.open(path, default_settings(), embedder=HashingEmbedder()).close()
    assert cli.main(["fitness", "show", "--path", path]) == 0
    assert "may not be enabled" in capsys.readouterr().out
    assert cli.main(["fitness", "run", "--path", path]) == 0
    out = capsys.readouterr().out
    assert "fitness PASSED" in out and "report" in out
    assert cli.main(["fitness", "show", "--path", path]) == 0
    assert "may be enabled" in capsys.readouterr().out


def test_a_change_to_the_decision_code_needs_a_new_run(host, monkeypatch):
    from memory_core.hostmem import fitness

    run_fitness(host)
    require_fitness(host, load_bundle())  # qualified for the code as it is
    digest = fitness.decision_code_digest()
    assert len(digest) == 16 and digest == fitness.decision_code_digest()  # stable within a run
    monkeypatch.setattr(fitness, "decision_code_digest", lambda: "0" * 16)  # as if gaps.py had been edited
    with pytest.raises(HostMemoryNotQualifiedError, match="decision_code"):
        require_fitness(host, load_bundle())
