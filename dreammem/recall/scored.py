"""A recall candidate as the stages after fusion see it, and collapsing same-text records."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dreammem.recall.fusion import Fused
from dreammem.types import MemoryRecord

__all__ = ["Scored", "dedupe", "text_key"]


@dataclass(slots=True)
class Scored:
    """A fused candidate with its record and the scores each stage gave it."""

    fused: Fused
    record: MemoryRecord
    fused_rank: int = 0
    rerank: float | None = None
    rerank_rank: int | None = None
    score: float = 0.0
    decay: float = 1.0
    twins: list[MemoryRecord] = dataclasses.field(default_factory=list)


def text_key(text: str) -> str:
    """The text as recall compares copies of a memory: case and runs of whitespace ignored."""
    return " ".join(text.casefold().split())


def dedupe(items: list[Scored]) -> list[Scored]:
    """Collapse records with the same text (a turn and the fact written from it).

    The better-ranked one stays; the paths and ranks of the other are merged into it.
    """
    kept: dict[str, Scored] = {}
    for item in items:
        key = text_key(item.record.content)
        first = kept.get(key)
        if first is None:
            kept[key] = item
            continue
        if item.record.pinned and not first.record.pinned:
            item.fused, first.fused = first.fused, item.fused
            item.twins.extend([first.record, *first.twins])
            kept[key] = item
            first = item
        else:
            first.twins.append(item.record)
        for path, rank in item.fused.ranks.items():
            first.fused.ranks.setdefault(path, rank)
        for path, score in item.fused.path_scores.items():
            first.fused.path_scores.setdefault(path, score)
        first.fused.timed = first.fused.timed or item.fused.timed
        if first.fused.similarity is None:
            first.fused.similarity = item.fused.similarity
    return list(kept.values())
