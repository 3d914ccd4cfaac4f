from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemConfig, DreamMemory, Kind, Layer, ValidationError
from dreammem.config import DreamConfig
from dreammem.dream import DreamScheduler
from dreammem.dream.triggers import TriggerState, check_triggers
from dreammem.embed import HashingEmbedder
from dreammem_bench.scripted_llm import ScriptedDreamLLM
from tests.unit.dream.support import T0, seed

CFG = DreamConfig(queue_limit=10, interval_hours=24, queue_backstop=50)


def state(
    size: int, last: float | None = None, oldest: float | None = 0, phase: bool = False
) -> TriggerState:
    def at(hours: float | None):  # type: ignore[no-untyped-def]
        return None if hours is None else T0 + timedelta(hours=hours)

    return TriggerState(size, at(last), at(oldest) if size else None, phase)


@pytest.mark.parametrize(
    ("st", "hours", "expected"),
    [
        (state(0), 100, (False, "empty")),
        (state(10), 1, (True, "queue_limit")),
        (state(3), 1, (False, "not_due")),
        (state(3, last=0), 25, (True, "interval")),
        (state(3, last=None, oldest=0), 25, (True, "interval")),
        (state(3, last=20), 25, (False, "not_due")),
        (state(3, phase=True), 1, (True, "phase_end")),
        (state(0, phase=True), 1, (False, "empty")),
    ],
)
def test_count_first_triggers(st: TriggerState, hours: float, expected: tuple[bool, str]) -> None:
    decision = check_triggers(st, CFG, T0 + timedelta(hours=hours))
    assert (decision.due, decision.reason) == expected


@pytest.mark.parametrize(
    ("st", "hours", "expected"),
    [
        (state(10), 1, (False, "not_due")),  # the count limit alone does not trigger
        (state(3, phase=True), 1, (False, "not_due")),  # nor does the end of a phase
        (state(3, last=0), 25, (True, "interval")),
        (state(50), 1, (True, "count_backstop")),
    ],
)
def test_time_first_triggers(st: TriggerState, hours: float, expected: tuple[bool, str]) -> None:
    config = CFG.model_copy(update={"time_first": True})
    decision = check_triggers(st, config, T0 + timedelta(hours=hours))
    assert (decision.due, decision.reason) == expected


def open_memory(path: Path, llm: object | None = None, **dream: object) -> DreamMemory:
    config = DreamMemConfig(dream=CFG.model_copy(update=dream))
    return DreamMemory(path, embedder=HashingEmbedder(), config=config, llm=llm)


def test_maybe_dream_on_queue_size(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        seed(memory, turns=[("s", "user", "hello")] * 9)
        assert memory.maybe_dream("u1", now=T0 + timedelta(hours=1)) == []
        seed(
            memory, turns=[("s", "user", "one more thing about the garden")], start=T0 + timedelta(minutes=30)
        )
        (report,) = memory.maybe_dream("u1", now=T0 + timedelta(hours=1))
        assert report.trigger == "queue_limit" and report.queued == 10
        assert memory.maybe_dream("u1", now=T0 + timedelta(hours=2)) == []


def test_maybe_dream_on_time_since_last_dream(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        seed(memory, turns=[("s", "user", "we talked about the garden")])
        memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
        seed(memory, turns=[("s", "user", "and about the roses")], start=T0 + timedelta(hours=2))
        assert memory.maybe_dream("u1", now=T0 + timedelta(hours=10)) == []
        (report,) = memory.maybe_dream("u1", now=T0 + timedelta(hours=26))
        assert report.trigger == "interval"


def test_end_task_stores_the_outcome_and_dreams(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        memory.set_task_state({"goal": "book the Lisbon offsite"}, user_id="u1", session_id="s")
        seed(memory, turns=[("s", "user", "we picked the hotel near the river")])
        (report,) = memory.end_task(
            user_id="u1",
            session_id="s",
            outcome="Booked via the travel portal; the corporate card needs approval first.",
            success=True,
            now=T0 + timedelta(hours=1),
        )
        assert report.trigger == "phase_end"
        (trace,) = memory.get_all(user_id="u1", layer="procedural")
        assert trace.kind is Kind.TASK_TRACE and trace.layer is Layer.PROCEDURAL
        assert trace.metadata == {"success": True, "goal": "book the Lisbon offsite", "phase": "task"}
        assert memory.end_session(user_id="u1", session_id="s", now=T0 + timedelta(hours=2)) == []


def test_end_session_dreams_when_records_wait(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        seed(memory, turns=[("s", "user", "we talked about the garden")])
        (report,) = memory.end_session(user_id="u1", session_id="s", now=T0 + timedelta(hours=1))
        assert report.trigger == "phase_end"


def test_second_level_is_due_after_its_interval(tmp_path: Path) -> None:
    with open_memory(tmp_path, second_level_interval_days=7) as memory:
        seed(memory, turns=[("s", "user", "we talked about the garden")])
        memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
        assert memory.maybe_dream("u1", now=T0 + timedelta(days=3)) == []
        (report,) = memory.maybe_dream("u1", now=T0 + timedelta(days=8))
        assert report.level == 2 and report.trigger == "second_level_interval"
        assert memory.maybe_dream("u1", now=T0 + timedelta(days=9)) == []


class GatedLLM:
    """A scripted LLM that records how many dreams run at once and waits on a gate."""

    def __init__(self) -> None:
        self.inner = ScriptedDreamLLM()
        self.running = 0
        self.max_running = 0
        self.lock = threading.Lock()
        self.entered = threading.Event()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        self.entered.set()
        time.sleep(0.05)
        with self.lock:
            self.running -= 1
        return self.inner(prompt)


def test_scheduler_runs_due_dreams_and_never_two_at_once(tmp_path: Path) -> None:
    llm = GatedLLM()
    with open_memory(tmp_path, llm=llm, queue_limit=5) as memory:
        turns = [("s", "assistant", f"I reviewed layout draft {n} with the design team") for n in range(30)]
        seed(memory, turns=turns)
        scheduler = DreamScheduler(memory, poll_seconds=0.01, clock=lambda: T0 + timedelta(hours=1))
        on_demand: list[object] = []
        with scheduler:
            assert llm.entered.wait(5)
            on_demand.append(memory.dream(user_id="u1", now=T0 + timedelta(hours=1)))
            deadline = time.time() + 5
            while memory.stats(user_id="u1")["queue"] and time.time() < deadline:
                time.sleep(0.01)
        assert llm.max_running == 1
        assert scheduler.failures == []
        logged = memory.store.fetchall("SELECT COUNT(*) FROM dreams WHERE level = 1")[0][0]
        assert logged == 1  # the on-demand dream waited and found the queue consumed
        assert scheduler.reports and scheduler.reports[0].trigger == "queue_limit"


def test_scheduler_survives_a_failing_user(tmp_path: Path) -> None:
    with open_memory(tmp_path, queue_limit=1) as memory:
        seed(memory, user="u1", turns=[("s", "user", "we talked about the garden")])
        seed(memory, user="u2", turns=[("s", "user", "we talked about the roses")])
        real = memory.maybe_dream

        def flaky(user_id: str, **kw: object) -> list[object]:
            if user_id == "u1":
                raise RuntimeError("disk on fire")
            return real(user_id, **kw)  # type: ignore[arg-type]

        memory.maybe_dream = flaky  # type: ignore[method-assign,assignment]
        scheduler = DreamScheduler(memory, poll_seconds=1, clock=lambda: T0 + timedelta(hours=1))
        reports = scheduler.run_once()
        assert [r.user_id for r in reports] == ["u2"]
        assert scheduler.failures == ["RuntimeError: disk on fire"]
        with pytest.raises(ValidationError):
            DreamScheduler(memory, poll_seconds=0)
