"""Async twins of sync methods: one helper, typed by the method it wraps.

The core is sync-first (SQLite, FAISS and the models block), so an ``a``-prefixed
twin runs its sync method in a worker thread (:func:`asyncio.to_thread`) and keeps
its exact signature for type checkers::

    class DreamMemory:
        def get(self, memory_id: str, *, user_id: str) -> MemoryRecord: ...
        aget = async_twin(get)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["async_twin"]

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


def async_twin(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """An async method that runs ``method`` in a worker thread, with the same parameters."""

    @functools.wraps(method)
    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    twin.__name__ = "a" + method.__name__
    twin.__qualname__ = twin.__qualname__.rsplit(".", 1)[0] + "." + twin.__name__
    twin.__doc__ = f"Async twin of :meth:`{method.__name__}` (runs it in a worker thread)."
    return twin
