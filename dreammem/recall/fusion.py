"""Reciprocal rank fusion: merge ranked lists from several paths, keep each path's say."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dreammem.recall.base import Candidate, SearchMemo

__all__ = ["Fused", "fused_once", "reciprocal_rank_fusion", "stand_ins"]


def stand_ins(
    ranked: Mapping[str, Sequence[Candidate]], weights: Mapping[str, float], replaces: Mapping[str, str]
) -> dict[str, Sequence[Candidate]]:
    """The lists to fuse: a path that a stand-in (with a weight above 0) answered for is left out.

    ``replaces`` maps each stand-in path to the path it takes the place of
    (:func:`dreammem.recall.recipe.stand_ins_for`): the unnamed path, the vector search of a
    question naming speakers done without the names, takes the vector path's place.
    """
    out = dict(ranked)
    for stand_in, replaced in replaces.items():
        if out.get(stand_in) and weights.get(stand_in, 1.0) > 0:
            out.pop(replaced, None)
    return out


@dataclass(slots=True)
class Fused:
    """One merged candidate: its RRF score, its rank and score in each path, ``timed`` and ``similarity``.

    ``timed``: some path found it by its time (:attr:`Candidate.timed`). ``similarity``: its
    cosine to the query, when a path carried one (:attr:`Candidate.similarity`).
    """

    rowid: int
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    path_scores: dict[str, float] = field(default_factory=dict)
    timed: bool = False
    similarity: float | None = None


def reciprocal_rank_fusion(
    ranked: Mapping[str, Sequence[Candidate]],
    *,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Merge ranked lists: score = sum over paths of ``weight / (k + rank)``.

    Duplicates within one path count once (at their best rank). Ties are broken by
    the number of paths that found the candidate, then by row id (newer first).
    """
    merged: dict[int, Fused] = {}
    held = merged.get
    for path, candidates in ranked.items():
        weight = 1.0 if weights is None else weights.get(path, 1.0)
        place = k  # k + rank: the rank of the next candidate new to this path, offset by k
        for candidate in candidates:
            rowid = candidate.rowid
            entry = held(rowid)
            if entry is None:  # new to the fusion, so new to this path: its first rank here
                place += 1
                merged[rowid] = Fused(
                    rowid,
                    weight / place,
                    {path: place - k},
                    {path: candidate.score},
                    candidate.timed,
                    candidate.similarity,
                )
                continue
            if candidate.timed:
                entry.timed = True
            if entry.similarity is None:
                entry.similarity = candidate.similarity
            if path in entry.ranks:
                continue
            place += 1
            entry.ranks[path] = place - k
            entry.path_scores[path] = candidate.score
            entry.score += weight / place
    return sorted(merged.values(), key=_order)


def _order(fused: Fused) -> tuple[float, int, int]:
    """Best score first, then found by more paths, then the newer row."""
    return (-fused.score, -len(fused.ranks), -fused.rowid)


def fused_once(searches: SearchMemo, ranked: Mapping[str, Sequence[Candidate]], *, k: int) -> list[Fused]:
    """``reciprocal_rank_fusion(ranked, k=k)``, fused once per recall for the same lists.

    The speaker, naming and reply paths fuse the paths before them (unweighted): the later
    ones get the first one's list, which none of them changes.
    """
    lists = tuple((name, id(found)) for name, found in ranked.items())
    return searches.once(("fused", k, lists), lambda: reciprocal_rank_fusion(ranked, k=k))
