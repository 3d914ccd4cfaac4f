"""Copy a whole store to another backend: embedded (SQLite + FAISS) to Neo4j and back.

:func:`migrate` copies every user of the source into the destination through the
export format (:mod:`dreammem.transfer`): every record with every field, history
versions and forgotten records included (``superseded_by``, ``provenance`` and the
record ids kept), whether it waits for the next dream, and the saved task states.
Then each user's dream log (reports and undo data, so ``undo_dream`` still works)
is copied. The destination derives the rest itself in the same
units of work: keyword terms, embeddings (with the source's embedding model) and
the graph.

Run it again after an interruption: records, dreams and task states already in the
destination are skipped or rewritten with the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dreammem.errors import ConfigError
from dreammem.memory import DreamMemory

__all__ = ["MigrationReport", "migrate"]

_ALL_DREAMS = 1_000_000


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What one migration copied."""

    users: int
    records: int
    skipped: int
    task_states: int
    dreams: int


def migrate(source: DreamMemory, target: DreamMemory, users: Sequence[str] | None = None) -> MigrationReport:
    """Copy these users (default: every user of ``source``) into ``target``.

    Raises:
        ConfigError: the target was built with another embedding model than the source.
        ValidationError: record ids of the source belong to other users in the target.
    """
    model, target_model = source.store.get_meta("embedding_model"), target.store.get_meta("embedding_model")
    if model is not None and target_model is not None and model != target_model:
        raise ConfigError(f"the source was embedded with {model!r}, the target with {target_model!r}")
    chosen = sorted(set(source.store.users()) | set(source.store.dream_users())) if users is None else users
    records = skipped = states = dreams = 0
    for user in chosen:
        result = target.import_(source.export(user_id=user), user_id=user)
        records, skipped, states = (
            records + result.imported,
            skipped + result.skipped,
            states + result.task_states,
        )
        for row in reversed(source.store.list_dreams(user, _ALL_DREAMS)):  # oldest first
            if target.store.get_dream(row.dream_id) is None:
                target.store.add_dream(row)
                dreams += 1
    return MigrationReport(len(chosen), records, skipped, states, dreams)
