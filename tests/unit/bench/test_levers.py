"""Recall levers scored by leave-one-conversation-out (``--loco --levers``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError
from dreammem.recall.second_vector import SecondVectorPath
from dreammem_bench.levers import (
    families,
    lever_settings,
    other_depths,
    run_levers,
    setup_levers,
    with_second_model,
)
from dreammem_bench.loco import FusionSetting, score_settings
from dreammem_bench.loco_cli import lever_table, parse_depths, parse_levers
from dreammem_bench.locomo import LocomoConversation, load_locomo
from dreammem_bench.methods import DreamMemMethod

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations() -> list[LocomoConversation]:
    return load_locomo(FIXTURE)


def test_every_combination_of_lever_weights_once_all_off_first() -> None:
    settings = lever_settings(["graph_named", "e5"], [0.0, 0.5, 1.0])
    assert len(settings) == 9 and len(set(settings)) == 9
    assert settings[0] == ()
    assert (("graph_named", 0.5), ("e5", 1.0)) in settings
    picked = families(settings, ["graph_named", "e5"])
    assert [settings[i] for i in picked["graph_named"]] == [
        (),
        (("graph_named", 0.5),),
        (("graph_named", 1.0),),
    ]
    assert picked["all"] == list(range(9))
    assert set(families(lever_settings(["e5"], [0.0, 1.0]), ["e5"])) == {"e5"}


def test_a_lever_setting_adds_its_paths_and_weights_to_a_copy() -> None:
    base = RecallConfig()
    setting = FusionSetting.of(base).with_levers((("graph_named", 0.5),))
    tuned = setting.apply(base)
    assert tuned.active_paths == (*base.active_paths, "graph_named")
    assert tuned.weight("graph_named") == 0.5 and tuned.weight("vector") == base.weight("vector")
    assert FusionSetting.of(base).apply(base).active_paths == base.active_paths  # no levers: paths untouched
    assert base.active_paths == RecallConfig().active_paths
    assert "graph_named=0.5" in setting.label and setting.to_dict()["levers"] == {"graph_named": 0.5}


def test_a_lever_the_shipped_config_runs_is_taken_out_at_weight_0() -> None:
    base = RecallConfig()
    assert "person" in base.active_paths and base.weight("person") == 0.5
    off = FusionSetting(base.rrf_k, FusionSetting.of(base).path_weights, off=("person",))
    assert off.apply(base).active_paths == tuple(p for p in base.active_paths if p != "person")
    assert "person=off" in off.label and off.to_dict()["off"] == ["person"]
    on = off.with_levers((("person", 1.0),)).apply(base)
    assert "person" in on.active_paths and on.weight("person") == 1.0
    assert "person=1" in off.with_levers((("person", 1.0),)).label
    assert FusionSetting.of(base).apply(base).active_paths == base.active_paths  # nothing off: shipped


@pytest.mark.usefixtures("counted_ids")
def test_the_person_lever_toggles_the_shipped_person_path(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        setup = setup_levers(["person"])
        run = run_levers(method, conversations, ["person"], weights=(0.0, 1.0), setup=setup, k=5)
        assert ["person=off" in s.label for s in run.settings] == [True, False]
        assert "person=1" in run.settings[1].label
        pipeline, shipped = method.memory.pipeline, method.memory.pipeline.config
        voted = []
        for setting in run.settings:  # the same question under each setting: person votes only when on
            pipeline.config = setting.apply(shipped)
            hits = method.memory.recall("What is the name of Ava's cat?", user_id="tiny-1", k=5).hits
            voted.append(any("person" in h.paths for h in hits))
        assert voted == [False, True]
    finally:
        method.close()


@pytest.mark.usefixtures("counted_ids")
def test_the_all_off_setting_scores_exactly_as_the_shipped_pipeline(
    conversations: list[LocomoConversation],
) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    setup = setup_levers(["graph_named"], method=method)
    try:
        base = FusionSetting.of(method.memory.pipeline.config)
        settings = [base, base.with_levers((("graph_named", 1.0),))]
        with_levers = score_settings(
            method, conversations, settings, k=5, extra_paths=setup.paths, extra_specs=setup.specs
        )
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
    levers = ["graph_named", "speaker", "naming", "reply", "unnamed"]
    try:
        setup = setup_levers(levers, method=method)
        run = run_levers(method, conversations, levers, weights=(0.0, 1.0), setup=setup, k=5)
    finally:
        method.close()
    assert len(run.settings) == 32 and set(run.results) == {*levers, "all"}
    report = run.to_dict()
    family = report["families"]["graph_named"]
    assert family["baseline hit@5"] == run.results["all"].pooled_default["overall"]["hit@5"]
    assert len(family["chosen"]) == len(conversations) == len(family["fold hit@5 minus baseline"])
    hits = report["first_hits"]
    assert len(hits) == 32
    for setting, scores in zip(hits, run.scores, strict=True):
        for conversation, rows in setting.items():
            outcomes = scores[conversation]
            assert [r[0] for r in rows] == [o.category for o in outcomes]
            for (_, rank), outcome in zip(rows, outcomes, strict=True):
                gold_at = [i for i, s in enumerate(outcome.retrieved, 1) if s & outcome.gold]
                assert rank == (gold_at[0] if gold_at else 0)
    assert lever_table(run).row_count == 6
    with pytest.raises(ValueError, match="two conversations"):
        run_levers(method, conversations[:1], levers, setup=setup)


def test_unknown_levers_and_bad_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown levers"):
        setup_levers(["graph_named", "telepathy"])
    with pytest.raises(ValueError, match="second_model"):
        setup_levers(["e5"])
    plain = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        with pytest.raises(ValueError, match="second_model"):
            setup_levers(["e5"], method=plain)
    finally:
        plain.close()
    with pytest.raises(ValueError, match="needs the method"):
        setup_levers(["graph_named"])
    assert parse_levers(None, "0,1") is None
    assert parse_levers("graph_named, e5", "1,0.5,1") == (("graph_named", "e5"), (0.0, 0.5, 1.0))
    for levers, weights in [
        ("telepathy", "1"),
        ("", "1"),
        ("graph_named", "0"),
        ("graph_named", "-1"),
        ("graph_named", "x"),
        *((removed, "1") for removed in ("session", "feedback", "index", "vector_feedback")),
    ]:
        with pytest.raises(ConfigError):
            parse_levers(levers, weights)
    result = CliRunner().invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--levers", "e5"])
    assert isinstance(result.exception, ConfigError) and "--levers needs --loco" in str(result.exception)


@pytest.mark.usefixtures("counted_ids")
def test_the_e5_lever_is_the_librarys_second_vector_path(conversations: list[LocomoConversation]) -> None:
    config = with_second_model(DreamMemConfig(), ["speaker", "e5"])
    assert config.embedding.second_model == "e5"
    assert with_second_model(DreamMemConfig(), ["speaker"]) == DreamMemConfig()
    method = DreamMemMethod(config, embedder=HashingEmbedder())
    try:
        setup = setup_levers(["e5"], method=method)
        path = setup.paths["e5"]
        assert isinstance(path, SecondVectorPath)
        assert path is method.memory.pipeline.paths["second_vector"]
        base = FusionSetting.of(method.memory.pipeline.config)
        # At 0.5 e5 moved one fifth place of this tiny fixture, and only by the old FAISS tie order.
        settings = [base, base.with_levers((("e5", 2.0),))]
        scores = score_settings(
            method, conversations, settings, k=5, extra_paths=setup.paths, extra_specs=setup.specs
        )
        user = conversations[0].sample_id
        assert (
            method.memory.stats(user_id=user)["second_vectors"]
            == method.memory.stats(user_id=user)["vectors"]
        )
    finally:
        method.close()
    plain = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        alone = score_settings(plain, conversations, [FusionSetting.of(plain.memory.pipeline.config)], k=5)
    finally:
        plain.close()
    assert scores[0] == alone[0]  # the index kept for the lever changes nothing while it is off
    assert scores[1] != scores[0]  # on, e5's neighbours move the HashingEmbedder's rankings


@pytest.mark.usefixtures("counted_ids")
def test_a_depth_scores_as_a_store_configured_with_it(conversations: list[LocomoConversation]) -> None:
    method = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        setup = setup_levers(["person"])
        run = run_levers(
            method, conversations, ["person"], weights=(0.0, 1.0), depths=(30, 2), setup=setup, k=2
        )
    finally:
        method.close()
    fresh = DreamMemMethod(DreamMemConfig(), embedder=HashingEmbedder())
    try:
        alone = run_levers(fresh, conversations, ["person"], weights=(0.0, 1.0), setup=setup, k=2)
    finally:
        fresh.close()
    assert [s.depth for s in run.settings] == [None, None, 2, 2]  # 30 is the configuration's own
    assert "depth=2" in run.settings[2].label and run.settings[2].to_dict()["depth"] == 2
    assert run.scores[:2] == alone.scores  # the configuration's depth first, as without --depths
    assert len(run.results["person"].settings) == 4  # the folds choose the depth with the weight
    shallow = DreamMemConfig.model_validate({"recall": {"candidates_per_path": 2}})
    plain = DreamMemMethod(shallow, embedder=HashingEmbedder())
    try:
        base = FusionSetting.of(plain.memory.pipeline.config)
        settings = [dataclasses.replace(base, off=("person",)), base.with_levers((("person", 1.0),))]
        direct = score_settings(plain, conversations, settings, k=2)
    finally:
        plain.close()
    assert run.scores[2:] == direct  # cached paths ran again at the new depth, exactly
    assert run.scores[2] != run.scores[0]  # and two candidates a path find less than thirty


def test_depths_are_whole_numbers_and_need_levers() -> None:
    assert parse_depths(None) == () and parse_depths("20, 50,20") == (20, 50)
    assert other_depths(30, (20, 30, 50, 20)) == [None, 20, 50]
    for bad in ("", "x", "0", "2.5"):
        with pytest.raises(ConfigError):
            parse_depths(bad)
    result = CliRunner().invoke(app, ["bench", "locomo", "--data", str(FIXTURE), "--loco", "--depths", "20"])
    assert isinstance(result.exception, ConfigError) and "--depths needs --levers" in str(result.exception)
