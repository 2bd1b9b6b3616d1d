"""A stage declares what it reads and writes, and the pipeline holds it to that: an undeclared read
or write, a value of the wrong type, a missing or mistyped hand-off, a drop without a reason and
an ``always`` stage that could read a hand-off a skipped stage never wrote all fail."""

from dataclasses import dataclass

import pytest

from memory_core.retrieve import Candidate, Pipeline, StageContractError, default_stages, run_stage
from memory_core.retrieve.pipeline import GIVEN, SearchRun, check_declarations, contract_of
from memory_core.settings import default_settings

SETTINGS = default_settings().retrieval


def _cands(n):
    return [Candidate(seq=i, record_id=f"mem_{i}", type="semantic", status="confirmed", scope="user:a", created_at="x")
            for i in range(n)]


def stage(name, reads: dict, writes: dict, run, always=False):
    """A stage class made on the spot: ``reads``/``writes`` map hand-off names to types."""
    inputs = dataclass(slots=True)(type("Inputs", (), {"__annotations__": dict(reads)}))
    outputs = dataclass(slots=True)(type("Outputs", (), {"__annotations__": dict(writes)}))
    cls = type(name.title(), (), {"name": name, "Inputs": inputs, "Outputs": outputs, "always": always,
                                  "run": lambda self, given, rec, deps: run(self, given, rec)})
    return cls()


def test_the_default_pipelines_declarations_hold():
    check_declarations(default_stages())
    gate = contract_of(type(next(s for s in default_stages() if s.name == "gate")))
    assert "ranking" in gate.reads and set(gate.writes) == {"ranking", "gate", "floors_deferred", "empty_reason"}


def test_a_stage_sees_only_what_it_declared():
    peeks = stage("peeks", {"ranking": list[Candidate]}, {"ranking": list[Candidate]},
                  lambda self, given, rec: self.Outputs(given.settings))  # settings was not declared
    with pytest.raises(AttributeError, match="settings"):
        run_stage(peeks, ranking=_cands(1), settings=SETTINGS)


def test_a_stage_cannot_write_what_it_did_not_declare():
    def sneaky(self, given, rec):
        out = self.Outputs(given.ranking)
        out.gate = {"passed": True}  # not a declared output
        return out

    with pytest.raises(AttributeError, match="gate"):
        run_stage(stage("sneaky", {"ranking": list[Candidate]}, {"ranking": list[Candidate]}, sneaky), ranking=_cands(1))
    returns_dict = stage("dicts", {"ranking": list[Candidate]}, {"ranking": list[Candidate]},
                         lambda self, given, rec: {"ranking": given.ranking})
    with pytest.raises(StageContractError, match="returned dict, not its declared Outputs"):
        run_stage(returns_dict, ranking=_cands(1))


def test_a_value_of_the_wrong_type_is_refused():
    tuples = stage("tuples", {"ranking": list[Candidate]}, {"ranking": list[Candidate]},
                   lambda self, given, rec: self.Outputs(tuple(given.ranking)))
    with pytest.raises(StageContractError, match="wrote 'ranking' as tuple"):
        run_stage(tuples, ranking=_cands(1))


def test_a_drop_needs_a_reason():
    sloppy = stage("sloppy", {"ranking": list[Candidate]}, {"ranking": list[Candidate]},
                   lambda self, given, rec: self.Outputs(given.ranking[1:]))
    with pytest.raises(StageContractError, match=r"sloppy dropped \['mem_0'\] without a reason"):
        run_stage(sloppy, ranking=_cands(2))

    def careful(self, given, rec):
        rec.drop(given.ranking[0], "a test reason")
        return self.Outputs(given.ranking[1:])

    out, trace = run_stage(stage("careful", {"ranking": list[Candidate]}, {"ranking": list[Candidate]}, careful), ranking=_cands(2))
    assert [c.record_id for c in out.ranking] == ["mem_1"] and trace.dropped == [{"id": "mem_0", "reason": "a test reason"}]


def test_a_required_input_nobody_writes_is_refused_when_the_pipeline_is_built():
    reads_ranking = stage("early", {"ranking": list[Candidate]}, {"ranking": list[Candidate]}, None)
    with pytest.raises(StageContractError, match="stage early reads 'ranking', which no earlier stage writes"):
        Pipeline([reads_ranking])
    with pytest.raises(StageContractError, match=r"reads \['ranking'\], which no earlier stage wrote"):
        run_stage(reads_ranking)  # alone, without the input


def test_a_reader_and_its_writer_must_agree_on_the_type():
    writes = stage("writer", {}, {"ranking": list[Candidate]}, None)
    reads = stage("reader", {"ranking": dict}, {}, None)
    with pytest.raises(StageContractError, match="reads 'ranking' as <class 'dict'>, but it is written as list"):
        Pipeline([writes, reads])
    optional = stage("optional", {"ranking": list[Candidate] | None}, {}, None)
    Pipeline([writes, optional])  # the same type, optional, agrees
    with pytest.raises(StageContractError, match="writes 'settings', which every search is given"):
        Pipeline([stage("rebel", {}, {"settings": dict}, None)])


def test_an_always_stage_needs_a_default_for_what_a_skipped_stage_writes():
    halts = stage("halts", {}, {"empty_reason": str | None}, None)
    writes = stage("writer", {}, {"ranking": list[Candidate]}, None)
    explains = stage("explains", {"ranking": list[Candidate]}, {}, None, always=True)
    with pytest.raises(StageContractError, match="always runs, so 'ranking' needs a default"):
        Pipeline([halts, writes, explains])
    Pipeline([writes, halts, explains])  # written before anything can end the search: always there


def test_after_a_halt_only_the_always_stages_run():
    ran = []

    def record(self, given, rec):
        ran.append(self.name)
        return self.Outputs(**({"empty_reason": "nothing to find"} if self.name == "halts" else {}))

    stages = [stage("halts", {}, {"empty_reason": str | None}, record), stage("later", {}, {}, record),
              stage("closing", {}, {}, record, always=True)]
    run = SearchRun(None, {name: None for name in GIVEN}, [])
    Pipeline(stages).run(run)
    assert ran == ["halts", "closing"] and [s.status for s in run.stages] == ["ran", "skipped", "ran"]
    assert run.stages[1].notes == ["skipped: the search already ended empty (nothing to find)"]
