"""Accesses written behind the recall: in order, none lost on close (dreammem.stores.touch_behind)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from dreammem.stores.touch_behind import TouchBehind

T0 = datetime(2024, 1, 1, tzinfo=UTC)


class Recorder:
    """A ``touch`` that waits for a gate and records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...], datetime]] = []
        self.gate = threading.Event()

    def __call__(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        self.gate.wait(10)
        self.calls.append((user_id, tuple(ids), at))


def test_add_returns_before_the_write_and_close_writes_every_access_in_order() -> None:
    touch = Recorder()
    behind = TouchBehind(touch)
    given = [("u1", (f"r{n}",), T0 + timedelta(seconds=n)) for n in range(5)]
    for user_id, ids, at in given:
        behind.add(user_id, ids, at)  # would block here if written in this thread
    assert len(touch.calls) < len(given)
    touch.gate.set()
    behind.close()
    assert touch.calls == given


def test_an_access_after_close_is_written_at_once_and_a_failing_write_is_dropped() -> None:
    calls: list[str] = []

    def touch(user_id: str, ids: Sequence[str], at: datetime) -> None:
        if ids[0] == "bad":
            raise RuntimeError("server gone")
        calls.append(ids[0])

    behind = TouchBehind(touch)
    behind.add("u1", ["bad"], T0)
    behind.add("u1", ["good"], T0)
    behind.close()
    behind.add("u1", ["late"], T0)
    behind.add("u1", [], T0)
    assert calls == ["good", "late"]
