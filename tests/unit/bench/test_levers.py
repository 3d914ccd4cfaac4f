"""Recall levers scored by leave-one-conversation-out (``--loco --levers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.embed.models import E5Embedder
from dreammem.errors import ConfigError
from dreammem.recall.base import RecallQuery
from dreammem_bench.levers import (
    SecondVectorPath,
    families,
    lever_settings,
    run_levers,
    setup_levers,
)
from dreammem_bench.loco import FusionSetting, score_settings
from dreammem_bench.loco_cli import lever_table, parse_levers
from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.methods import DreamMemMethod

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations() -> list[LocomoConversation]:
    return load_locomo(FIXTURE)


def test_every_combination_of_lever_weights_once_all_off_first() -> None:
    settings = lever_settings(["session", "feedback"], [0.0, 0.5, 1.0])
    assert len(settings) == 9 and len(set(settings)) == 9
    assert settings[0] == ()
    assert (("session", 0.5), ("feedback", 1.0)) in settings
    picked = families(settings, ["session", "feedback"])
    assert [settings[i] for i in picked["session"]] == [(), (("session", 0.5),), (("session", 1.0),)]
    assert picked["all"] == list(range(9))
    assert set(families(lever_settings(["index"], [0.0, 1.0]), ["index"])) == {"index"}


def test_a_lever_setting_adds_its_paths_and_weights_to_a_copy() -> None:
    base = RecallConfig()
    setting = FusionSetting.of(base).with_levers((("session", 0.5),))
    tuned = setting.apply(base)
    assert tuned.paths == (*base.paths, "session")
    assert tuned.path_weights == {**base.path_weights, "session": 0.5}
    assert FusionSetting.of(base).apply(base).paths == base.paths  # no levers: paths untouched
    assert base.paths == RecallConfig().paths
    assert "session=0.5" in setting.label and setting.to_dict()["levers"] == {"session": 0.5}


def test_the_all_off_setting_scores_exactly_as_the_shipped_pipeline(
    conversations: list[LocomoConversation],
) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    setup = setup_levers(["session", "feedback"])
    try:
        base = FusionSetting.of(method.memory.pipeline.config)
        settings = [base, base.with_levers((("session", 1.0), ("feedback", 1.0)))]
        with_levers = score_settings(method, conversations, settings, k=5, extra_paths=setup.paths)
    finally:
        method.close()
    plain = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        alone = score_settings(plain, conversations, [FusionSetting.of(plain.memory.pipeline.config)], k=5)
    finally:
        plain.close()
    assert with_levers[0] == alone[0]


def test_run_levers_reports_each_family_and_first_hit_ranks(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    levers = ["session", "feedback", "index", "graph_named"]
    try:
        setup = setup_levers(levers, method=method)
        run = run_levers(method, conversations, levers, weights=(0.0, 1.0), setup=setup, k=5)
        indexed = method.memory.store.index_rows(conversations[0].sample_id)
    finally:
        method.close()
    assert indexed  # the index lever built the memory index the index path reads
    assert len(run.settings) == 16 and set(run.results) == {*levers, "all"}
    report = run.to_dict()
    family = report["families"]["session"]
    assert family["baseline hit@5"] == run.results["all"].pooled_default["overall"]["hit@5"]
    assert len(family["chosen"]) == len(conversations) == len(family["fold hit@5 minus baseline"])
    hits = report["first_hits"]
    assert len(hits) == 16
    for setting, scores in zip(hits, run.scores, strict=True):
        for conversation, rows in setting.items():
            outcomes = scores[conversation]
            assert [r[0] for r in rows] == [o.category for o in outcomes]
            for (_, rank), outcome in zip(rows, outcomes, strict=True):
                gold_at = [i for i, s in enumerate(outcome.retrieved, 1) if s & outcome.gold]
                assert rank == (gold_at[0] if gold_at else 0)
    assert lever_table(run).row_count == 5
    with pytest.raises(ValueError, match="two conversations"):
        run_levers(method, conversations[:1], levers, setup=setup)


def test_unknown_levers_and_bad_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown levers"):
        setup_levers(["session", "telepathy"])
    with pytest.raises(ValueError, match="embedder factory"):
        setup_levers(["e5"])
    with pytest.raises(ValueError, match="needs the method"):
        setup_levers(["graph_named"])
    assert parse_levers(None, "0,1") is None
    assert parse_levers("session, feedback", "1,0.5,1") == (("session", "feedback"), (0.0, 0.5, 1.0))
    for levers, weights in [
        ("telepathy", "1"),
        ("", "1"),
        ("session", "0"),
        ("session", "-1"),
        ("session", "x"),
    ]:
        with pytest.raises(ConfigError):
            parse_levers(levers, weights)
    result = CliRunner().invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--levers", "session"])
    assert isinstance(result.exception, ConfigError) and "--levers needs --loco" in str(result.exception)


def test_the_second_vector_path_searches_its_own_model_over_the_stores_memories() -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        texts = ["The cat sleeps on the sofa all afternoon.", "I paid the electricity bill yesterday."]
        method.memory.add_many([{"content": t, "user_id": "u1"} for t in texts])
        method.memory.add("Someone else's note about kittens.", user_id="u2")
        path = SecondVectorPath(E5Embedder(), name="e5")
        assert path.add_user(method, "u1") == 2
        query = RecallQuery(
            "where does my kitten nap?", "u1", 5, method.memory.store.find("u1")[0].event_time
        )
        found = path.search(query)
        records = method.memory.store.get_by_rowids("u1", [c.rowid for c in found])
        assert [records[c.rowid].content for c in found] == texts  # u2's note is not in u1's index
    finally:
        method.close()
