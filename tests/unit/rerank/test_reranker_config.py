"""Reranker and training settings that are refused before any model loads, and missing extras.

A missing package is simulated as Python sees it when it is not installed
(``sys.modules[name] = None`` makes its import raise ImportError).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dreammem.errors import ConfigError
from dreammem.rerank import CrossEncoderReranker
from dreammem.rerank.training import TrainingPair, train_cross_encoder

PAIRS = [TrainingPair("which pet?", "a grey cat", 1.0), TrainingPair("which pet?", "the bakery closed", 0.0)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_length": 7}, "max_length must be at least 8"),
        ({"max_length": 32, "batch_size": 0}, "batch_size must be at least 1"),
        ({"max_length": 32, "threads": 0}, "threads must be at least 1"),
    ],
)
def test_bad_settings_are_refused_before_loading(
    tmp_path: Path, kwargs: dict[str, int], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        CrossEncoderReranker(tmp_path / "never-read", **kwargs)  # type: ignore[arg-type]


def test_a_reranker_without_torch_names_the_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("sentence_transformers", "transformers", "transformers.utils"):  # make test's venv
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ConfigError, match=r"dreammem\[torch\]"):
        CrossEncoderReranker(tmp_path / "model", max_length=32)


def test_training_without_its_extra_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ConfigError, match=r"dreammem\[train\]"):
        train_cross_encoder(PAIRS, tmp_path / "out")
    assert not (tmp_path / "out").exists()
