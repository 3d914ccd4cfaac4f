"""LongMemEval's retrieval metrics (Wu et al. 2025), pure functions, no I/O.

A method answers one question with a ranking of *items*, best first: each item is
a ``(session id, turn id)`` pair, the turn id ``None`` for a whole-session method.
Session-level metrics read the distinct sessions in order of first appearance:
``s_any@k`` (a gold session among the first k), ``s_all@k`` (every gold session
among them) and ``ndcg@10`` (binary relevance). ``t_any@k``: a gold turn among the
first k items (turn methods only; ``nan`` for a session method). An abstention
question is scored only by ``returned``, the number of items recall gave back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["LME_KEYS", "Item", "LmeOutcome", "mean_by_type", "score_lme"]

Item = tuple[str, str | None]
"""One retrieved item: its session id and, for a turn, its turn id."""

LME_KEYS = ("s_any@5", "s_any@10", "s_all@5", "s_all@10", "ndcg@10", "t_any@5", "t_any@10")


@dataclass(frozen=True, slots=True)
class LmeOutcome:
    """What one method retrieved for one question, scored.

    Attributes:
        question_id: The question.
        question_type: Its type (``"abstention"`` for an ``_abs`` question).
        scores: Every key of :data:`LME_KEYS` (empty for abstention).
        returned: How many items the method returned.
    """

    question_id: str
    question_type: str
    scores: Mapping[str, float]
    returned: int


def _sessions(items: Sequence[Item]) -> list[str]:
    return list(dict.fromkeys(session for session, _ in items))


def _ndcg(sessions: Sequence[str], gold: frozenset[str], k: int) -> float:
    gains = sum(1.0 / math.log2(i + 2) for i, s in enumerate(sessions[:k]) if s in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return gains / ideal if ideal else 0.0


def score_lme(
    items: Sequence[Item], gold_sessions: Iterable[str], gold_turns: Iterable[str]
) -> dict[str, float]:
    """Every metric of :data:`LME_KEYS` for one answerable question.

    Raises:
        ValueError: No gold session.
    """
    gold = frozenset(gold_sessions)
    if not gold:
        raise ValueError("an answerable question needs a gold session")
    turns = frozenset(gold_turns)
    sessions = _sessions(items)
    out = {
        "s_any@5": float(bool(gold & set(sessions[:5]))),
        "s_any@10": float(bool(gold & set(sessions[:10]))),
        "s_all@5": float(gold <= set(sessions[:5])),
        "s_all@10": float(gold <= set(sessions[:10])),
        "ndcg@10": _ndcg(sessions, gold, 10),
    }
    turn_method = any(turn is not None for _, turn in items) or not items
    for k in (5, 10):
        out[f"t_any@{k}"] = (
            float(any(turn in turns for _, turn in items[:k])) if turn_method and turns else math.nan
        )
    return out


def mean_by_type(outcomes: Sequence[LmeOutcome]) -> dict[str, dict[str, float]]:
    """Mean of each metric per question type and over ``"all"`` answerable questions.

    ``nan`` values (no gold turn, or a session method) are left out of a mean; the
    ``n`` key counts the questions. Abstention questions give ``returned`` (their mean
    number of items) and ``empty`` (the share that returned nothing).
    """
    groups: dict[str, list[LmeOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.question_type, []).append(outcome)
        if outcome.question_type != "abstention":
            groups.setdefault("all", []).append(outcome)
    table: dict[str, dict[str, float]] = {}
    for name, group in groups.items():
        row: dict[str, float] = {"n": float(len(group))}
        if name == "abstention":
            row["returned"] = sum(o.returned for o in group) / len(group)
            row["empty"] = sum(o.returned == 0 for o in group) / len(group)
        else:
            for key in LME_KEYS:
                values = [v for o in group if not math.isnan(v := o.scores[key])]
                row[key] = sum(values) / len(values) if values else math.nan
        table[name] = row
    return table
