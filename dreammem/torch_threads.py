"""Run a block of torch work on a set number of intra-op threads.

One short query or a 30-pair rerank gains little from a second thread on an idle
machine, and on a shared one the threads spin against other work: a 2-layer
cross-encoder over 30 pairs took ~380 ms on 2 threads and ~95 ms on 1 at load 3
(docs/BENCHMARKS.md, recall latency). torch's setting is process-wide, so it is
restored afterwards; callers hold their own model lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["torch_threads"]


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """Use ``count`` torch threads inside the block (``None``: leave torch's setting)."""
    if count is None:
        yield
        return
    import torch  # noqa: PLC0415 - heavy: only when a model is configured

    saved = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(saved)
