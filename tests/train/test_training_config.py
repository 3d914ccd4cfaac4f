"""Training settings refused once the training libraries have loaded (the train extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreammem.errors import ConfigError
from dreammem.rerank.training import TrainingConfig, TrainingPair, train_cross_encoder

PAIRS = [TrainingPair("which pet?", "a grey cat", 1.0), TrainingPair("which pet?", "the bakery closed", 0.0)]


def test_training_from_a_folder_that_holds_no_model_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="cannot load base model"):
        train_cross_encoder(PAIRS, tmp_path / "out", base_model=tmp_path / "empty")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("layers", [0, 7])
def test_more_layers_than_the_base_model_has_are_refused(tmp_path: Path, layers: int) -> None:
    config = TrainingConfig(num_layers=layers, max_length=16)
    with pytest.raises(ConfigError, match=r"num_layers must be within 1\.\.6"):
        train_cross_encoder(PAIRS, tmp_path / "out", config=config)
    assert not (tmp_path / "out").exists()
