"""The generic stage runner (memory_core/stages.py)."""

from dataclasses import dataclass, field

import pytest

from memory_core.stages import Stage, StageTimer, run_stages


@dataclass
class Ctx:
    seen: list = field(default_factory=list)
    stopped: bool = False


def test_stages_run_in_order_are_timed_and_can_stop_early():
    def mark(name, stop=False):
        def run(ctx):
            ctx.seen.append(name)
            ctx.stopped = stop
        return Stage(name, run)

    timer = StageTimer()
    ctx = run_stages([mark("a"), mark("b", stop=True), mark("c")], Ctx(), timer)
    assert ctx.seen == ["a", "b"] and list(timer.stages) == ["a", "b"]
    assert all(ms >= 0 for ms in timer.stages.values()) and timer.total_ms() >= 0


def test_a_stage_may_return_a_new_context():
    ctx = run_stages([Stage("swap", lambda c: Ctx(seen=["new"]))], Ctx(), StageTimer())
    assert ctx.seen == ["new"]


def test_a_failing_stage_is_named_on_the_timer_and_still_timed():
    def boom(ctx):
        raise ValueError("no")

    timer = StageTimer()
    with pytest.raises(ValueError) as info:
        run_stages([Stage("fine", lambda c: None), Stage("boom", boom)], Ctx(), timer)
    assert timer.failed == "boom" and "boom" in timer.stages
    assert not hasattr(info.value, "failed_stage")  # nothing rides on the exception
