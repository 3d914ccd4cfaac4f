"""The circuit breaker in front of a remote graph: fail fast, probe, close, explicit retry."""

from __future__ import annotations

import threading

import pytest

from dreammem.errors import GraphUnavailableError
from dreammem.stores.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Probe:
    """Answers as told; records each call; a probe runs in its own thread."""

    def __init__(self) -> None:
        self.up = False
        self.calls = 0
        self.done = threading.Event()

    def __call__(self) -> None:
        self.calls += 1
        try:
            if not self.up:
                raise ConnectionError("still down")
        finally:
            self.done.set()


def _breaker() -> tuple[CircuitBreaker, Probe, Clock]:
    probe, clock = Probe(), Clock()
    return CircuitBreaker("graph", probe, retry_after=10.0, clock=clock), probe, clock


def _wait_probe(breaker: CircuitBreaker, probe: Probe) -> None:
    assert probe.done.wait(5)
    for _ in range(100):  # the probe thread clears its slot right after answering
        if breaker.probing is False:
            return
        threading.Event().wait(0.01)
    raise AssertionError("probe did not finish")


def test_a_closed_breaker_lets_calls_through() -> None:
    breaker, probe, _ = _breaker()
    breaker.check()
    assert not breaker.is_open and probe.calls == 0


def test_an_open_breaker_fails_fast_and_probes_only_after_the_cool_down() -> None:
    breaker, probe, clock = _breaker()
    breaker.opened(ConnectionError("refused"))
    for _ in range(3):
        with pytest.raises(GraphUnavailableError, match="refused") as info:
            breaker.check()
        assert info.value.is_retryable
    assert probe.calls == 0  # still cooling down
    clock.now = 10.0
    with pytest.raises(GraphUnavailableError):
        breaker.check()  # starts the probe, still fails fast
    _wait_probe(breaker, probe)
    assert probe.calls == 1 and breaker.is_open  # the probe failed: open for another cool-down
    with pytest.raises(GraphUnavailableError):
        breaker.check()
    assert probe.calls == 1


def test_a_successful_probe_closes_the_breaker() -> None:
    breaker, probe, clock = _breaker()
    breaker.opened(ConnectionError("refused"))
    probe.up, clock.now = True, 11.0
    with pytest.raises(GraphUnavailableError):
        breaker.check()
    _wait_probe(breaker, probe)
    assert not breaker.is_open
    breaker.check()


def test_an_explicit_reset_lets_the_next_call_through_at_once() -> None:
    breaker, probe, _ = _breaker()
    breaker.opened(ConnectionError("refused"))
    breaker.reset()
    breaker.check()
    assert probe.calls == 0


def test_a_request_that_succeeds_closes_an_open_breaker() -> None:
    breaker, _, _ = _breaker()
    breaker.opened(ConnectionError("refused"))
    breaker.closed()
    breaker.check()
