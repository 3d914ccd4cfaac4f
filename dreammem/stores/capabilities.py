"""What each store declares it can do, as typed names: record store, graph store, vector index.

Every member is a string (``StrEnum``), so ``"relations" in graph.capabilities`` still
reads the same as ``GraphCapability.RELATIONS in graph.capabilities``. Callers check a
declared capability; they never probe a method for it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["REQUIRED_CAPABILITIES", "GraphCapability", "RecordCapability", "VectorCapability"]


class RecordCapability(StrEnum):
    """One capability a record store declares in ``capabilities``."""

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
    GATHERED_READS = "gathered_reads"
    """Optional: every call is a network round trip, and ``surroundings`` answers in one: a recall
    reads what it needs about its candidates ahead, at once (:mod:`dreammem.stores.surroundings`)."""


REQUIRED_CAPABILITIES: frozenset[RecordCapability] = frozenset(
    {RecordCapability.FTS, RecordCapability.TRANSACTIONS, RecordCapability.VECTORS, RecordCapability.QUEUE}
)
"""The capabilities of the required roles: every record store declares them."""


class GraphCapability(StrEnum):
    """One capability a graph store declares in ``capabilities``."""

    TRANSACTIONAL = "transactional"
    """Writes join the record store's open transaction; otherwise they go through an outbox."""
    RELATIONS = "relations"
    """Entity-entity relation edges are stored and traversed."""
    SHARED = "shared"
    """One graph for processes on many hosts (a server database)."""


class VectorCapability(StrEnum):
    """One capability a vector index declares in ``capabilities``."""

    EXACT = "exact"
    """A search can rank every vector of the user exactly."""
    APPROXIMATE = "approximate"
    """Large scopes are searched approximately (an ANN index)."""
    PERSISTENT = "persistent"
    """The index outlives the process (a file or a server)."""
