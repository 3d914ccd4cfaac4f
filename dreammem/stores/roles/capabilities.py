"""What a record store declares it can do (its required roles and the optional ones), as typed names."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["REQUIRED_CAPABILITIES", "RecordCapability"]


class RecordCapability(StrEnum):
    """One capability a record store declares in ``capabilities``; callers check, never probe.

    Members are strings, so ``"grounded_times" in store.capabilities`` still reads the
    same as ``RecordCapability.GROUNDED_TIMES in store.capabilities``.
    """

    FTS = "fts"
    """Keyword search (the ``KeywordIndex`` role); every record store has it."""
    TRANSACTIONS = "transactions"
    """Atomic units of work and locked reads (``StoreLifecycle``); every record store has it."""
    VECTORS = "vectors"
    """Stored embeddings (``StoredEmbeddings``); every record store has it."""
    QUEUE = "queue"
    """The dream queue (``DreamQueue``); every record store has it."""
    GROUNDED_TIMES = "grounded_times"
    """Optional: the store keeps the windows records' relative dates point at
    (``TimeIndex``); without it recall caches them per process."""
    SHARED = "shared"
    """Optional: one store for processes on many hosts (a server database, not a local file)."""


REQUIRED_CAPABILITIES: frozenset[RecordCapability] = frozenset(
    {RecordCapability.FTS, RecordCapability.TRANSACTIONS, RecordCapability.VECTORS, RecordCapability.QUEUE}
)
"""The capabilities of the required roles: every record store declares them."""
