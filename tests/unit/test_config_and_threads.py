from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dreammem import ConfigError, DreamMemConfig, DreamMemory, load_config
from dreammem.embed import HashingEmbedder


def test_load_config_from_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[write]\nworking_memory_turns = 6\n[recall]\nrrf_k = 30\n[graph]\ntype = "embedded"\n')
    config = load_config(toml)
    assert config.write.working_memory_turns == 6 and config.recall.rrf_k == 30
    js = tmp_path / "c.json"
    js.write_text('{"graph": {"type": "neo4j", "uri": "bolt://127.0.0.1:7687"}}')
    assert load_config(js).graph.type == "neo4j"


@pytest.mark.parametrize(
    "text",
    [
        "[write]\nworking_memory_turn = 6\n",
        "[recall]\nrrf_k = -1\n",
        "not = [valid",
        '[graph]\ntype = "mongo"\n',
    ],
)
def test_bad_config_is_a_config_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError):
        load_config(path)
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml")


def test_config_is_frozen_and_variants_do_not_leak() -> None:
    base = DreamMemConfig()
    variant = base.model_copy(update={"write": base.write.model_copy(update={"working_memory_turns": 3})})
    assert base.write.working_memory_turns == 8 and variant.write.working_memory_turns == 3
    with pytest.raises(ValueError):
        base.write.working_memory_turns = 2  # type: ignore[misc]


def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:

        def work(n: int) -> None:
            try:
                for i in range(25):
                    memory.add(f"thread {n} note {i} about gardens", user_id=f"u{n % 2}", session_id=f"s{n}")
                    memory.recall("gardens", user_id=f"u{n % 2}")
            except BaseException as exc:  # collected and re-raised in the main thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert memory.store.count() == 100
        assert memory.stats()["vectors"] == 100
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        assert memory.stats()["vectors"] == 100
        hits = memory.recall("gardens", user_id="u0", k=50)
        assert len(hits) == 50 and all(h.record.user_id == "u0" for h in hits)
