"""What a recall may return: no junk, at most ``k`` hits, core memories from their budget.

* **No junk.** Filler ("Got it.", "Noted.", "今天天气真不错") and DreamMem's own tool
  echoes ("Saved memory <id>.") stay in the episodic log but are never recall hits
  (:mod:`dreammem.text.filler`). A pinned memory is never junk: the user asked for it.
* **A real k.** ``recall(k)`` returns at most ``k`` hits. Pinned (core) memories rank
  like any other memory. Those that did not rank (the query is about something else),
  or ranked below the cut, are added after the ranked hits (the ranked ones first, the
  others newest first) from a budget of
  ``RecallConfig.pinned_max_count`` memories and ``pinned_max_tokens`` tokens; they
  take the last ranked slots, but never the only one: ``recall(k=1)`` with a relevant
  hit returns that hit, and with none returns one core memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dreammem.config import RecallConfig
from dreammem.recall.result import Hit
from dreammem.text.filler import is_filler, is_tool_echo
from dreammem.text.tokens import ApproximateTokenCounter
from dreammem.types import MemoryRecord

__all__ = ["CORE_PATHS", "is_junk", "with_core_memories", "worth_recalling"]

CORE_PATHS = ("pinned",)
"""``Hit.paths`` of a pinned memory added from the core budget (no path ranked it)."""

_COUNT = ApproximateTokenCounter()


@lru_cache(maxsize=8192)
def is_junk(text: str) -> bool:
    """True for filler and tool echoes (cached: the same turns come back query after query)."""
    return is_filler(text) or is_tool_echo(text)


def worth_recalling(record: MemoryRecord) -> bool:
    """Whether a record may be a recall hit: pinned, or not filler / a tool echo."""
    return record.pinned or not is_junk(record.content)


def with_core_memories(
    ranked: Sequence[Hit], core: Sequence[Hit], *, k: int, config: RecallConfig
) -> list[Hit]:
    """At most ``k`` hits: the ranked ones, then core memories from their budget.

    A pinned memory that ranked below the cut is a core memory too (before those that
    did not rank): ranking low never hides it where not ranking would not.

    Args:
        ranked: The hits that ranked, best first (pinned ones included).
        core: Pinned memories that did not rank, in the order they may be added.
        k: The most hits returned.
        config: ``pinned_max_count`` and ``pinned_max_tokens``.
    """
    room = max(0, k - (1 if ranked else 0))
    cut = k
    while True:  # each added core memory moves the cut up one: a pinned hit may fall below it
        below = [hit for hit in ranked[cut:] if hit.record.pinned]
        chosen = _within_budget([*below, *core], config)[:room]
        if k - len(chosen) >= cut:
            break
        cut = k - len(chosen)
    shown = {hit.id for hit in chosen}
    return [*[hit for hit in ranked if hit.id not in shown][: k - len(chosen)], *chosen]


def _within_budget(hits: Sequence[Hit], config: RecallConfig) -> list[Hit]:
    """The hits, in order, that fit ``pinned_max_count`` memories and ``pinned_max_tokens`` tokens."""
    chosen: list[Hit] = []
    tokens = 0
    for hit in hits:
        if len(chosen) >= config.pinned_max_count:
            break
        cost = _COUNT(hit.record.content)
        if tokens + cost > config.pinned_max_tokens:
            continue
        chosen.append(hit)
        tokens += cost
    return chosen
