"""Config validation per section: unknown fields, ranges, the graph union, derived values, files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

from dreammem import ConfigError, DreamMemConfig, DreamMemory
from dreammem.config import EmbeddedGraphConfig, Neo4jGraphConfig, RecallConfig, load_config
from dreammem.embed import HashingEmbedder

SECTIONS = ("embedding", "write", "recall", "dream", "vector_index", "store", "llm", "mcp")


def _load(tmp_path: Path, data: dict[str, Any]) -> DreamMemConfig:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_refuses_a_field_it_does_not_have(tmp_path: Path, section: str) -> None:
    with pytest.raises(ConfigError, match="Extra inputs are not permitted"):
        _load(tmp_path, {section: {"no_such_setting": 1}})


@pytest.mark.parametrize(
    "data",
    [
        {"embedding": {"runtime": "gpu"}},
        {"embedding": {"batch_size": 0}},
        {"write": {"working_memory_turns": 101}},
        {"recall": {"rerank_blend": "max"}},
        {"recall": {"budget_fraction": 0}},
        {"recall": {"budget_fraction": 1.5}},
        {"recall": {"path_weights": {"vector": -1}}},
        {"dream": {"llm_batch_size": 51}},
        {"dream": {"interval_hours": 0}},
        {"dream": {"llm_retries": 6}},
        {"graph": {"type": "neo4j"}},  # a Neo4j graph needs its URI
        {"graph": {"type": "neo4j", "uri": "bolt://h", "timeout": 0}},
    ],
)
def test_values_out_of_range_name_the_field(tmp_path: Path, data: dict[str, Any]) -> None:
    section, values = next(iter(data.items()))
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, data)
    assert section in str(info.value)
    assert isinstance(info.value.__cause__, PydanticValidationError)
    assert any(field in str(info.value) for field in values)


def test_an_infinite_weight_is_refused_in_code_too() -> None:
    with pytest.raises(PydanticValidationError):
        RecallConfig(path_weights={"vector": float("inf")})


def test_the_graph_section_picks_its_model_by_type(tmp_path: Path) -> None:
    assert isinstance(DreamMemConfig().graph, EmbeddedGraphConfig)
    config = _load(tmp_path, {"graph": {"type": "neo4j", "uri": "bolt://h:7687", "user": "neo4j"}})
    assert isinstance(config.graph, Neo4jGraphConfig)
    assert (config.graph.uri, config.graph.user, config.graph.database) == ("bolt://h:7687", "neo4j", "neo4j")


def test_the_budget_follows_the_window_and_its_share() -> None:
    assert RecallConfig().budget_tokens == int(8192 * 0.3)
    assert RecallConfig(model_window_tokens=1000, budget_fraction=0.5).budget_tokens == 500


def test_a_file_that_is_not_utf8_or_not_an_object_is_a_config_error(tmp_path: Path) -> None:
    latin = tmp_path / "c.toml"
    latin.write_bytes('[dream]\ntask_goal = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="cannot load config"):
        load_config(latin)
    listed = tmp_path / "c.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot load config"):
        load_config(listed)


def test_any_suffix_but_toml_is_read_as_json(tmp_path: Path) -> None:
    path = tmp_path / "settings.conf"
    path.write_text('{"dream": {"queue_limit": 5}}', encoding="utf-8")
    assert load_config(path).dream.queue_limit == 5
    path.write_text("[dream]\nqueue_limit = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(path)


@pytest.mark.parametrize("paths", [("vectr",), ("vector", "keywords"), ("graph", "BM25")])
def test_a_misspelt_recall_path_is_a_config_error_not_an_empty_recall(
    tmp_path: Path, paths: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, {"recall": {"paths": list(paths)}})
    wrong = [p for p in paths if p not in ("vector", "graph")]
    assert all(repr(p) in str(info.value) for p in wrong) and "known" in str(info.value)


@pytest.mark.parametrize(
    "recall",
    [{"preset": "generall"}, {"path_weights": {"vectr": 1.0}}, {"preset": "general", "paths": ["x"]}],
)
def test_an_unknown_preset_or_weighted_path_is_refused_when_the_config_is_built(
    recall: dict[str, object],
) -> None:
    with pytest.raises(PydanticValidationError, match="unknown recall"):
        RecallConfig.model_validate(recall)


def test_a_preset_names_the_paths_and_explicit_paths_win() -> None:
    assert RecallConfig(preset="lexical").active_paths == ("keyword", "temporal")
    assert RecallConfig(preset="lexical", paths=("vector",)).active_paths == ("vector",)
    assert (
        RecallConfig().weight("graph") == 0.25
        and RecallConfig(path_weights={"graph": 2.0}).weight("graph") == 2.0
    )


def test_every_recall_path_the_store_builds_can_be_configured_alone(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "store", embedder=HashingEmbedder()) as memory:
        names = sorted(memory.pipeline.paths)
        memory.add("The boat is called Sea Otter", user_id="u1")
    assert {"vector", "keyword", "temporal", "graph", "reply"} <= set(names)
    for name in names:
        config = DreamMemConfig(recall=RecallConfig(paths=(name,)))
        with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
            result = memory.recall("what is the boat called", user_id="u1", k=3)
        assert set(result.degraded) <= {name}
        assert all(set(h.paths) <= {name, "core"} for h in result.hits), name
