"""dreammem.twins.async_twin: one helper makes every a-twin; it runs off the event loop."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from dreammem.twins import async_twin


class Clock:
    """A tiny sync API with a blocking method, the shape of the facade."""

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.gate = threading.Event()

    def wait(self, name: str, *, timeout: float = 5.0) -> str:
        """Block until the gate opens; return the name."""
        self.threads.append(threading.get_ident())
        if not self.gate.wait(timeout):
            raise TimeoutError(name)
        return name

    def fail(self, message: str) -> None:
        """Raise a lookup error."""
        raise LookupError(message)

    await_ = async_twin(wait)
    afail = async_twin(fail)


def test_a_twin_keeps_the_signature_and_names_itself() -> None:
    assert inspect.iscoroutinefunction(Clock.await_)
    assert inspect.signature(Clock.await_) == inspect.signature(Clock.wait)
    assert Clock.await_.__name__ == "await"
    assert Clock.await_.__qualname__ == "Clock.await"
    assert ":meth:`wait`" in (Clock.await_.__doc__ or "")


def test_a_twin_runs_in_a_worker_thread_and_leaves_the_loop_free() -> None:
    clock = Clock()

    async def scenario() -> tuple[str, int]:
        waiting = asyncio.create_task(clock.await_("first", timeout=5.0))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # blocked in its thread, while this coroutine still runs
        loop_thread = threading.get_ident()
        clock.gate.set()
        return await waiting, loop_thread

    result, loop_thread = asyncio.run(scenario())
    assert result == "first"
    assert clock.threads and clock.threads[0] != loop_thread


def test_a_twin_raises_what_the_method_raises() -> None:
    with pytest.raises(LookupError, match="no such memory"):
        asyncio.run(Clock().afail("no such memory"))
