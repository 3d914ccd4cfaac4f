"""Running a recall's paths: each inside its degradation boundary, timed as a stage.

A path that raises drops out with a warning and is listed in the recall's ``degraded``
(:mod:`dreammem.recall.pipeline`); the others still answer. A recall none of whose
essential paths answered is an error (:func:`every_path_failed`), not an empty answer.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence

from dreammem.errors import BackendError, DreamMemError
from dreammem.recall.base import Candidate, RecallPath, RecallQuery, preparer

__all__ = ["StageClock", "every_path_failed", "prepare_paths", "run_paths"]

log = logging.getLogger(__name__)


class StageClock:
    """Collects per-stage timings in milliseconds, and the error of each path that failed."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.failed: dict[str, Exception] = {}
        self._start = time.perf_counter()

    def lap(self, name: str, since: float) -> None:
        """Add the time since ``since`` (a ``time.perf_counter()``) to the stage ``name``."""
        self.timings[name] = self.timings.get(name, 0.0) + (time.perf_counter() - since) * 1000

    def total(self) -> None:
        """Note the time since the clock started as ``total``."""
        self.timings["total"] = (time.perf_counter() - self._start) * 1000


def run_paths(
    paths: Mapping[str, RecallPath],
    query: RecallQuery,
    names: Sequence[str],
    clock: StageClock,
    degraded: dict[str, str],
    done: Mapping[str, list[Candidate] | None] | None = None,
    *,
    essential: Sequence[str] | None = None,
) -> dict[str, list[Candidate]]:
    """Each path's candidates, in ``names`` order; each path sees those of the paths before it.

    ``done``: paths that already ran for this query, with their candidates (None: it failed).
    ``essential``: raise :func:`every_path_failed` when every one of these paths failed (the
    paths that read the store's own indexes, :func:`dreammem.recall.recipe.essential_paths`:
    when all of them failed the store did, and the others cannot stand for an answer).
    """
    ranked: dict[str, list[Candidate]] = {}
    for name in names:
        if done is not None and name in done:
            if (found := done[name]) is not None:
                ranked[name] = found
            continue
        start = time.perf_counter()
        try:
            ranked[name] = paths[name].search(dataclasses.replace(query, earlier=dict(ranked)))
        except Exception as exc:  # degradation boundary: one path may fail
            log.warning("recall path %s failed: %s", name, exc)
            degraded[name] = f"{type(exc).__name__}: {exc}"
            clock.failed[name] = exc
        clock.lap(name, start)
    if essential and all(n in clock.failed for n in essential):
        raise every_path_failed(essential, clock.failed)
    return ranked


def prepare_paths(
    paths: Mapping[str, RecallPath], query: RecallQuery, names: Sequence[str], clock: StageClock
) -> None:
    """Let the paths read what they need of the query's text alone (timed as their stage)."""
    for name in names:
        if (prepare := preparer(paths[name])) is None:
            continue
        start = time.perf_counter()
        try:
            prepare(query)
        except Exception as exc:  # the path's search reads it again, inside its own boundary
            log.debug("recall path %s could not prepare: %s", name, exc)
        clock.lap(name, start)


def every_path_failed(names: Sequence[str], errors: Mapping[str, Exception]) -> DreamMemError:
    """The error of a recall none of whose paths answered: the first path's own typed error.

    A store that cannot be reached (Neo4j down or frozen) fails every path with the same
    retryable :class:`~dreammem.errors.BackendError` (``GraphUnavailableError``), which
    the caller gets as is, so that it retries instead of answering with no memory.
    Anything else becomes a ``BackendError`` with the first cause chained (retryable when
    that cause is a ``ConnectionError`` or ``TimeoutError``).
    """
    failures = [errors[n] for n in names if n in errors]
    for error in failures:
        if isinstance(error, DreamMemError):
            return error
    summary = "; ".join(f"{n}: {type(e).__name__}: {e}" for n, e in errors.items()) or "no path ran"
    transient = bool(failures) and isinstance(failures[0], ConnectionError | TimeoutError)
    failed = BackendError(f"every recall path failed ({summary})", is_retryable=transient)
    if failures:
        failed.__cause__ = failures[0]
    return failed
