"""The relevance-floor calibration: fold bookkeeping and floor choice on synthetic recalls."""

from __future__ import annotations

from dreammem_bench.gate import GRID, GateQuery, leave_one_out, load_absent, spread


def _asked(group: str, cosine: float) -> GateQuery:
    # evidence at rank 1 with this cosine, then a keyword-only hit
    return GateQuery(group, False, (cosine, None), (True, False), (cosine, 0.1))


def _absent(group: str, cosine: float) -> GateQuery:
    return GateQuery(group, True, (cosine,), (False,), (cosine,))


def test_floor_keeps_evidence_and_stops_absent_questions() -> None:
    queries = []
    for group in ("a", "b", "c"):
        queries += [_asked(group, 0.45 + 0.01 * n) for n in range(10)]
        queries += [_absent(group, 0.2 + 0.01 * n) for n in range(6)]
    folds = leave_one_out(queries)
    assert [f.held_out for f in folds] == ["a", "b", "c"]
    for fold in folds:
        assert fold.floor in GRID and 0.25 < fold.floor <= 0.45  # above every absent, at most the evidence
        assert fold.hit5_without == 1.0 and fold.hit5_with == 1.0
        assert fold.absent_injected == 0.0


def test_a_floor_that_costs_evidence_is_not_chosen() -> None:
    queries = [_asked(g, c) for g in ("a", "b") for c in (0.21, 0.6, 0.6, 0.6)]
    folds = leave_one_out(queries, tolerance=0.0)
    assert all(f.floor <= 0.2 for f in folds)


def test_shipped_absent_questions_and_spread() -> None:
    absent = load_absent()
    assert len(absent["en"]) >= 50 and len(absent["zh"]) >= 30
    assert spread([0.3, 0.35, 0.4]) == "0.350 (0.300-0.400)"
