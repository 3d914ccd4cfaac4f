"""The real embedding models: MiniLM (English) and multilingual e5 (Chinese)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreammem import ConfigError, DreamMemConfig, DreamMemory
from dreammem.config import EmbeddingConfig
from dreammem.embed import HashingEmbedder

pytestmark = pytest.mark.integration


def test_minilm_recalls_by_meaning_and_survives_reopen(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path, embedder=minilm) as memory:
        memory.add_many(
            [
                {"content": "I adopted a golden retriever puppy last spring", "user_id": "u1"},
                {"content": "The quarterly report is due on Friday", "user_id": "u1"},
                {"content": "I started learning the cello", "user_id": "u1"},
            ]
        )
        first = memory.recall("do I have a dog?", user_id="u1", k=1)
        assert "golden retriever" in first[0].record.content
        assert "vector" in first[0].paths
    with DreamMemory(tmp_path, embedder=minilm) as memory:
        assert memory.recall("do I have a dog?", user_id="u1", k=1).ids == first.ids
        assert memory.stats()["embedding_model"] == "all-MiniLM-L6-v2"


def test_auto_picks_multilingual_model_for_chinese_and_recalls(tmp_path: Path) -> None:
    config = DreamMemConfig(embedding=EmbeddingConfig(model="auto"))
    with DreamMemory(tmp_path, config=config) as memory:
        memory.add_many(
            [
                {"content": "我养了一只金毛犬，它叫旺财", "user_id": "u1"},
                {"content": "下周五要交季度报告", "user_id": "u1"},
                {"content": "我最近在学大提琴", "user_id": "u1"},
            ]
        )
        assert memory.stats()["embedding_model"] == "multilingual-e5-small"
        hit = memory.recall("我的宠物是什么？", user_id="u1", k=1)[0]
        assert "金毛犬" in hit.record.content
        # Cross-lingual: an English question finds the Chinese memory.
        assert "大提琴" in memory.recall("what instrument am I learning", user_id="u1", k=1)[0].record.content
    with DreamMemory(tmp_path, config=config) as memory:
        assert memory.stats()["embedding_model"] == "multilingual-e5-small"


def test_store_refuses_another_model(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path, embedder=minilm) as memory:
        memory.add("hello", user_id="u1")
    with pytest.raises(ConfigError, match="reindex"):
        DreamMemory(tmp_path, embedder=HashingEmbedder())
