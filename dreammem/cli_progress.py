"""Progress bars for long CLI commands (reindex, dream, import), drawn by rich on stderr.

Bars are drawn only when stderr is a terminal, so piped output, CI logs and JSON on
stdout stay clean. ``progress_bar`` yields an ``advance(n)`` callback; a command that
cannot count its steps passes ``total=None`` and gets a spinner with the time spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from dreammem.embed.base import Embedder

__all__ = ["CountingEmbedder", "progress_bar"]

Advance = Callable[[int], None]


@contextmanager
def progress_bar(description: str, total: int | None, *, console: Console | None = None) -> Iterator[Advance]:
    """Show a bar (or, with ``total=None``, a spinner) while the block runs.

    Args:
        description: What is being done ("re-embedding").
        total: How many steps, or ``None`` when unknown.
        console: Where to draw (default: stderr).

    Yields:
        ``advance(n)``: mark ``n`` more steps done.
    """
    out = console or Console(stderr=True)
    if total is None:
        columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    else:
        columns = (  # type: ignore[assignment]
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
    with Progress(*columns, console=out, transient=True, disable=not out.is_terminal) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


class CountingEmbedder:
    """An embedder that reports every ``chunk`` texts it encodes (for a progress bar).

    Same ``name`` and ``dim`` as the wrapped model, so a store cannot tell them apart.
    """

    def __init__(self, inner: Embedder, advance: Advance, *, chunk: int = 64) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.advance = advance
        self.chunk = chunk

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Encode in chunks, reporting each."""
        parts = [np.zeros((0, self.dim), dtype=np.float32)]
        for start in range(0, len(texts), self.chunk):
            part = texts[start : start + self.chunk]
            parts.append(self.inner.embed_documents(part))
            self.advance(len(part))
        return np.concatenate(parts).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Encode one query (not counted)."""
        return self.inner.embed_query(text)
