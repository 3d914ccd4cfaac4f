"""Reranker training groups from a DreamMem store's own turns (no annotated questions).

The bridge between a store and :mod:`dreammem.rerank.self_supervised`: a user's
active conversation turns, in the order they were said (event time, then write
order), become :class:`~dreammem.rerank.self_supervised.StoredTurn` values (the
session is the thread; the speaker is the ``speaker`` metadata when present, else
the role), and the store's own recall ranks the negatives. Recall runs as the
store is configured: with no reranker (the case of someone training their first
one) that is the first stage.

``dreammem train-reranker --store PATH --user ID`` trains from it.
"""

from __future__ import annotations

from datetime import datetime

from dreammem.memory import DreamMemory
from dreammem.rerank.self_supervised import SelfSupervisedConfig, StoredTurn, self_supervised_groups
from dreammem.rerank.training import QueryGroup
from dreammem.types import Kind, MemoryRecord
from dreammem.validation import check_user_id

__all__ = ["store_groups", "store_turns"]


def _speaker(record: MemoryRecord) -> str | None:
    if record.speaker is not None:
        return record.speaker
    return None if record.role is None else record.role.value


def store_turns(memory: DreamMemory, *, user_id: str) -> list[StoredTurn]:
    """The user's active turns, oldest first, as training input."""
    records = memory.store.find(check_user_id(user_id), kinds=[Kind.TURN], newest_first=False)
    return [StoredTurn(r.content, r.session_id or "", _speaker(r)) for r in records]


def store_groups(
    memory: DreamMemory,
    *,
    user_id: str,
    config: SelfSupervisedConfig | None = None,
    now: datetime | None = None,
) -> list[QueryGroup]:
    """Self-supervised training groups from one user's turns, negatives from the store's recall.

    Args:
        memory: The store.
        user_id: Whose turns.
        config: Which queries and how deep the negative pool is.
        now: The reference time of recall (default: now).
    """
    user = check_user_id(user_id)

    def first_stage(query: str, depth: int, /) -> list[str]:
        return [hit.record.content for hit in memory.recall(query, user_id=user, k=depth, now=now)]

    return self_supervised_groups(store_turns(memory, user_id=user), first_stage, config)
