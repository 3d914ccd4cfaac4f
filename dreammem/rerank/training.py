"""Fine-tuning a cross-encoder offline from the packaged MiniLM weights.

No cross-encoder ships on the package registries these machines reach, so one is
trained locally: query -> relevant text pairs (label 1) plus hard negatives drawn
from a first-stage ranking (label 0), binary cross-entropy, a fixed seed. Training
needs the ``train`` extra (``datasets``, ``accelerate``).
"""

from __future__ import annotations

import json
import logging
import random
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dreammem.embed.models import default_minilm_path
from dreammem.errors import ConfigError, ValidationError
from dreammem.rerank.cross_encoder import METADATA_FILE

__all__ = [
    "METADATA_FILE",
    "QueryGroup",
    "TrainingConfig",
    "TrainingPair",
    "mine_pairs",
    "train_cross_encoder",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class QueryGroup:
    """One query with its relevant texts and a first-stage ranking to draw negatives from.

    Attributes:
        query: The query.
        positives: Texts relevant to it.
        candidates: First-stage results, best first (positives among them are skipped).
    """

    query: str
    positives: tuple[str, ...]
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TrainingPair:
    """A labelled (query, text) pair: 1.0 relevant, 0.0 not."""

    query: str
    text: str
    label: float


@dataclass(frozen=True, slots=True)
class TrainingConfig:
    """How a cross-encoder is fine-tuned.

    Attributes:
        epochs: Passes over the pairs.
        learning_rate: Peak learning rate (linear schedule with warm-up).
        batch_size: Pairs per step.
        max_length: Tokens per pair.
        negatives: Hard negatives per query.
        depth: How deep in the first-stage ranking negatives are drawn from.
        num_layers: Keep only the first N transformer layers (faster); ``None`` keeps all.
        warmup_ratio: Share of steps spent warming up.
        seed: Seeds sampling, initialisation and data order.
    """

    epochs: float = 2.0
    learning_rate: float = 5e-5
    batch_size: int = 32
    max_length: int = 64
    negatives: int = 3
    depth: int = 30
    num_layers: int | None = None
    warmup_ratio: float = 0.1
    seed: int = 42


def mine_pairs(groups: Iterable[QueryGroup], *, negatives: int = 3, seed: int = 42) -> list[TrainingPair]:
    """Labelled pairs: every positive of each query, plus hard negatives.

    ``negatives`` per query are drawn at random (seeded) from its first-stage
    candidates that are not positives.
    """
    rng = random.Random(seed)
    pairs: list[TrainingPair] = []
    for group in groups:
        positives = set(group.positives)
        pairs.extend(TrainingPair(group.query, text, 1.0) for text in group.positives)
        pool = [c for c in dict.fromkeys(group.candidates) if c not in positives]
        for text in rng.sample(pool, min(negatives, len(pool))):
            pairs.append(TrainingPair(group.query, text, 0.0))
    return pairs


def _base_model_path() -> str:
    return str(default_minilm_path())


def _truncate_layers(model: Any, num_layers: int) -> None:
    inner = model.model
    encoder = getattr(getattr(inner, "bert", None), "encoder", None)
    if encoder is None or not hasattr(encoder, "layer"):
        raise ConfigError("num_layers needs a BERT-style model")
    if not 1 <= num_layers <= len(encoder.layer):
        raise ConfigError(f"num_layers must be within 1..{len(encoder.layer)}")
    encoder.layer = encoder.layer[:num_layers]
    inner.config.num_hidden_layers = num_layers


def _warmup(transformers_version: str, ratio: float) -> dict[str, Any]:
    # transformers 5 takes the warm-up share as a float ``warmup_steps``; 4 has ``warmup_ratio``.
    major = int(transformers_version.split(".")[0])
    return {"warmup_steps": ratio} if major >= 5 else {"warmup_ratio": ratio}


def train_cross_encoder(
    pairs: Sequence[TrainingPair],
    out_dir: str | Path,
    *,
    config: TrainingConfig | None = None,
    base_model: str | Path | None = None,
) -> Path:
    """Fine-tune a cross-encoder on labelled pairs and save it to ``out_dir``.

    Args:
        pairs: The training pairs (both labels must occur).
        out_dir: Where the model is saved (loadable by :class:`CrossEncoderReranker`).
        config: Training settings.
        base_model: The starting weights; default the packaged all-MiniLM-L6-v2.

    Returns:
        The output folder.

    Raises:
        ValidationError: no pairs, or only one label.
        ConfigError: the training extra is missing or the model cannot be loaded.
    """
    cfg = config or TrainingConfig()
    labels = {p.label for p in pairs}
    if not pairs or labels != {0.0, 1.0}:
        raise ValidationError("training needs pairs with both labels (1.0 relevant, 0.0 not)")
    try:
        import transformers  # noqa: PLC0415 - heavy, and the train extra is optional
        from datasets import Dataset  # noqa: PLC0415 - the train extra is optional
        from sentence_transformers.cross_encoder import (  # noqa: PLC0415 - heavy: only when training
            CrossEncoder,
            CrossEncoderTrainer,
            CrossEncoderTrainingArguments,
        )
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss  # noqa: PLC0415 - heavy: only when training
    except ImportError as exc:
        raise ConfigError('training a reranker needs the extra: pip install "dreammem[train]"') from exc

    transformers.set_seed(cfg.seed)
    base = str(base_model) if base_model is not None else _base_model_path()
    try:
        model = CrossEncoder(base, num_labels=1, max_length=cfg.max_length, device="cpu")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load base model {base!r}: {exc}") from exc
    if cfg.num_layers is not None:
        _truncate_layers(model, cfg.num_layers)
    dataset = Dataset.from_dict(
        {
            "query": [p.query for p in pairs],
            "text": [p.text for p in pairs],
            "label": [p.label for p in pairs],
        }
    )
    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="dreammem-train-") as scratch:
        args = CrossEncoderTrainingArguments(
            output_dir=scratch,
            num_train_epochs=cfg.epochs,
            per_device_train_batch_size=cfg.batch_size,
            learning_rate=cfg.learning_rate,
            **_warmup(transformers.__version__, cfg.warmup_ratio),
            seed=cfg.seed,
            data_seed=cfg.seed,
            save_strategy="no",
            logging_strategy="no",
            report_to="none",
            use_cpu=True,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        trainer = CrossEncoderTrainer(
            model=model, args=args, train_dataset=dataset, loss=BinaryCrossEntropyLoss(model)
        )
        trainer.train()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    meta = {"base_model": base, "pairs": len(pairs), "positives": sum(p.label > 0 for p in pairs)}
    (out / METADATA_FILE).write_text(json.dumps({**meta, "config": asdict(cfg)}, indent=2))
    log.info("trained cross-encoder on %d pairs into %s", len(pairs), out)
    return out
