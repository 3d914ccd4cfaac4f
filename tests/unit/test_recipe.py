"""The recall recipe: one spec per path, presets, and an order that does not depend on the config's."""

from __future__ import annotations

import itertools

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.recipe import PATHS, PRESETS, run_order, stand_ins_for, unknown_paths


def test_every_preset_names_known_paths_and_validates() -> None:
    for name, paths in PRESETS.items():
        assert not unknown_paths(paths), name
        assert RecallConfig(preset=name).active_paths == paths


def test_a_path_runs_after_every_path_whose_candidates_it_reads() -> None:
    names = PRESETS["transcript"]
    for order in itertools.islice(itertools.permutations(names), 0, 5000, 97):
        ran = run_order(order)
        assert sorted(ran) == sorted(names)
        for position, name in enumerate(ran):
            assert all(ran.index(before) < position for before in PATHS[name].after if before in ran), ran
        assert ran == run_order(names)  # the listed order changes nothing


def test_run_order_keeps_each_path_once() -> None:
    assert run_order(["vector"] * 50 + ["keyword"] * 50) == ("vector", "keyword")


def test_stand_ins_come_from_the_specs() -> None:
    assert stand_ins_for(PRESETS["transcript"]) == {"unnamed": "vector"}
    assert stand_ins_for(PRESETS["plain"]) == {}


def test_the_store_builds_exactly_the_paths_of_the_recipe(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        assert set(memory.pipeline.paths) == set(PATHS) - {"second_vector"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_recall_gives_the_same_hits_whatever_order_the_paths_are_listed_in(tmp_path, preset: str) -> None:  # type: ignore[no-untyped-def]
    listed = PRESETS[preset]
    turns = [
        "Gina: I opened my dance studio in May.",
        "Jon: I lost my job at the bank last week.",
        "Gina: The studio floor is sprung oak.",
        "Jon: Which cities did you visit? I went to Paris and Rome.",
    ]
    found = []
    for paths in (listed, tuple(reversed(listed))):
        config = DreamMemConfig(recall=RecallConfig(paths=paths))
        with DreamMemory(tmp_path / f"m{len(found)}", config=config, embedder=HashingEmbedder()) as memory:
            for n, text in enumerate(turns):
                memory.add(text, user_id="u", session_id=f"s{n // 2}")
            result = memory.recall("What did Gina open in May?", user_id="u", k=4)
            found.append([(h.record.content, round(h.score, 9), sorted(h.paths)) for h in result])
    assert found[0] == found[1] and found[0]
