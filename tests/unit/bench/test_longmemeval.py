"""``bench longmemeval``: loading, the paper's metrics, every method on a tiny haystack, folds."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ValidationError
from dreammem_bench.lme_cli import SPENT_HELD, SPLITS, split_questions
from dreammem_bench.lme_methods import BM25Turns, DreamMemHaystack, FusionTurns, MiniLMSessions, MiniLMTurns
from dreammem_bench.lme_metrics import LmeOutcome, mean_by_type, score_lme
from dreammem_bench.lme_run import choose_by_folds, fold_of, run_lme
from dreammem_bench.longmemeval import load_longmemeval, parse_lme_time
from dreammem_bench.variants import parse_variant, parse_variants
from dreammem_bench.vector_cache import DiskCachedEmbedder

FIXTURE = Path(__file__).parents[2] / "fixtures" / "longmemeval_tiny.json"


def test_sessions_are_put_in_time_order_and_turns_keep_theirs() -> None:
    question = load_longmemeval(FIXTURE)[0]
    assert [s.session_id for s in question.sessions] == ["s-a", "s-b", "s-c"]
    assert question.turns[0].turn_id == "s-a#0" and question.turns[1].time > question.turns[0].time
    assert question.gold_turns == {"s-a#0", "s-b#0"}
    assert question.date == datetime(2023, 6, 10, 9, tzinfo=UTC)
    assert load_longmemeval(FIXTURE)[2].abstention


def test_a_malformed_time_is_a_validation_error() -> None:
    assert parse_lme_time("2023/05/20 (Sat) 07:34") == datetime(2023, 5, 20, 7, 34, tzinfo=UTC)
    with pytest.raises(ValidationError):
        parse_lme_time("20 May 2023")


def test_metrics_count_distinct_sessions_and_gold_turns() -> None:
    items = [("a", "a#1"), ("a", "a#2"), ("b", "b#0"), ("c", "c#0"), ("d", "d#0"), ("e", "e#3")]
    scores = score_lme(items, {"e", "b"}, {"e#0"})
    assert scores["s_any@5"] == 1.0 and scores["s_all@5"] == 1.0  # e is the fifth distinct session
    assert scores["t_any@10"] == 0.0  # e#3 is not the gold turn
    assert scores["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / (1 + 1 / math.log2(3)))
    session_only = score_lme([("b", None)], {"b"}, {"b#0"})
    assert session_only["s_any@5"] == 1.0 and math.isnan(session_only["t_any@5"])


def test_abstention_is_scored_by_what_came_back() -> None:
    table = mean_by_type([LmeOutcome("x_abs", "abstention", {}, 0), LmeOutcome("y_abs", "abstention", {}, 4)])
    assert table["abstention"] == {"n": 2.0, "returned": 2.0, "empty": 0.5} and "all" not in table


def test_every_method_runs_and_the_gold_turns_are_found(tmp_path: Path) -> None:
    questions = load_longmemeval(FIXTURE)
    embedder = DiskCachedEmbedder(HashingEmbedder(), tmp_path / "v.sqlite")
    bm25, minilm = BM25Turns(), MiniLMTurns(embedder)
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=None))
    dream = DreamMemHaystack(config, embedder)
    methods = [bm25, minilm, FusionTurns(bm25, minilm), MiniLMSessions(embedder), dream]
    outcomes = run_lme(questions, methods, k=3)
    dream.close()
    for name in ("bm25", "fusion", "dreammem"):
        cat = next(o for o in outcomes[name] if o.question_id == "q-ssu-1")
        assert cat.scores["t_any@5"] == 1.0, name
    assert all(o.returned for o in outcomes["dreammem"])
    encoded = embedder.misses
    again = DiskCachedEmbedder(HashingEmbedder(), tmp_path / "v.sqlite")
    run_lme(questions, [MiniLMTurns(again), MiniLMSessions(again)], k=3)
    assert encoded > 0 and again.misses == 0  # every text came from the file


def test_folds_choose_on_the_other_questions() -> None:
    def outcome(qid: str, value: float) -> LmeOutcome:
        return LmeOutcome(qid, "multi-session", {"t_any@5": value}, 5)

    ids = [f"q{i}" for i in range(40)]
    outcomes = {
        "dreammem": [outcome(q, 0.0) for q in ids],
        "better": [outcome(q, 1.0) for q in ids],
    }
    choice = choose_by_folds(outcomes, ["dreammem", "better"], "t_any@5", folds=4)
    assert choice.chosen == ("better",) * 4 and choice.pooled == 1.0
    assert {fold_of(q, 4) for q in ids} == {0, 1, 2, 3}


def test_variants_build_validated_recall_configs() -> None:
    base = RecallConfig()
    assert "reply" not in parse_variant("-reply", base).active_paths
    assert parse_variant("preset:plain", base).active_paths == (
        "vector",
        "keyword",
        "temporal",
        "graph",
        "reply",
        "bridge",
    )
    changed = parse_variant('rrf_k=60&path_weights={"vector": 1.0}', base)
    assert changed.rrf_k == 60 and changed.weight("vector") == 1.0
    assert [name for name, _ in parse_variants("-reply; rrf_k=60", base)] == ["-reply", "rrf_k=60"]
    for bad in ("-nothing", "preset:nope", "vectr=1", "what"):
        with pytest.raises(Exception, match="variant"):
            parse_variant(bad, base)


@pytest.mark.slow  # loads MiniLM
def test_skip_leaves_out_the_first_questions_of_the_split(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    args = ["bench", "longmemeval", "--data", str(FIXTURE), "--split", "all", "--skip", "1", "--limit", "1"]
    args += ["--no-baselines", "--cache", str(tmp_path / "v.bin"), "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["questions"] == ["q-ssu-1"]


def test_train_and_fresh_split_the_held_questions_at_the_ones_already_scored() -> None:
    """``train`` is dev plus the first SPENT_HELD held questions; ``fresh`` is the rest of held."""
    positions = range(240)
    dev = [i for i in positions if SPLITS["dev"](i)]
    held = [i for i in positions if SPLITS["held"](i)]
    train = [i for i in positions if SPLITS["train"](i)]
    fresh = [i for i in positions if SPLITS["fresh"](i)]
    assert sorted(dev + held[:SPENT_HELD]) == train
    assert held[SPENT_HELD:] == fresh
    assert not set(train) & set(fresh)
    assert len(fresh) == 40


def test_an_unknown_split_is_a_bad_parameter() -> None:
    with pytest.raises(typer.BadParameter, match="--split must be one of"):
        split_questions(FIXTURE, "heldout")


def test_the_dreamed_haystack_dreams_before_it_is_asked(tmp_path: Path) -> None:
    question = load_longmemeval(FIXTURE)[0]
    embedder = DiskCachedEmbedder(HashingEmbedder(), tmp_path / "v.sqlite")
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=None))
    plain, dreamed = DreamMemHaystack(config, embedder), DreamMemHaystack(config, embedder, dream=True)
    try:
        for haystack in (plain, dreamed):
            haystack.index(question)
        assert plain.memory is not None and dreamed.memory is not None
        assert plain.memory.store.queue_size(question.question_id) > 0
        assert dreamed.memory.store.queue_size(question.question_id) == 0
        assert dreamed.rank(question, 5)  # hits map to turns, distilled ones through provenance
    finally:
        plain.close()
        dreamed.close()
