"""Setting a library-owned mark by hand in tests (callers may not write reserved metadata)."""

from __future__ import annotations

import dataclasses

from dreammem import DreamMemory
from dreammem.types import MemoryRecord
from dreammem.write.relations import OUTDATED_BY_KEY


def mark_outdated(memory: DreamMemory, record: MemoryRecord, *newer_ids: str) -> MemoryRecord:
    """``record`` marked as possibly outdated by ``newer_ids``, as the write path marks it."""
    marked = dataclasses.replace(record, system={**record.system, OUTDATED_BY_KEY: list(newer_ids)})
    memory.store.update([marked])
    return marked
