"""Metadata keys the library owns: a caller may not write them.

The write path, the dream and erasure keep their decisions in a record's ``metadata``
beside the caller's own keys. Recall and the dream read them back: which older memory a
newer one may replace (``possibly_outdated_by``), what an update decided
(``update_decision``), whether a non-user record reads like an instruction
(``suspect_instruction``), what a summary or pattern stands for. Were a caller able to
write them, ``add(..., metadata={"possibly_outdated_by": [...]})`` would pull an unrelated
memory first and mark the user's own as outdated. :func:`refuse_reserved` rejects caller
metadata that names any of them (``add``, ``add_many``, ``remember`` and the adapters built
on them), so every such value in a store is one the library wrote. ``import_`` restores an
export as it was written and is not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dreammem.errors import ValidationError

__all__ = ["RESERVED_METADATA_KEYS", "refuse_reserved"]

RESERVED_METADATA_KEYS: frozenset[str] = frozenset(
    {
        # update relations (dreammem.write.relations, dreammem.write.revert)
        "possibly_outdated_by",
        "possibly_outdated_why",
        "possibly_outdates",
        "update_decision",
        "update_reverted",
        # provenance (dreammem.write.instructions, dreammem.write.records)
        "suspect_instruction",
        "from_turn",
        "correction",
        # the dream (summaries, patterns, merges, kept and archived records)
        "dream_id",
        "dream_kept_why",
        "summarizes",
        "verbatim_lines_for",
        "merged",
        "support",
        "observation",
        "of_kind",
        "archived",
        # erasure (dreammem.erasure)
        "edited",
    }
)
"""Every metadata key the library writes and reads back (18)."""


def refuse_reserved(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata, unchanged, or a ValidationError naming the reserved keys it holds."""
    taken = sorted(RESERVED_METADATA_KEYS.intersection(metadata))
    if taken:
        raise ValidationError(
            f"metadata keys {taken} are reserved for the library (dreammem.write.reserved); use other names"
        )
    return dict(metadata)
