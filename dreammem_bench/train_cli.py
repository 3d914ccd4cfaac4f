"""``dreammem train-reranker``: fine-tune the offline cross-encoder.

From LoCoMo-style annotated data (``--data``: questions and observations with
their evidence turns, BM25 hard negatives).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from dreammem.rerank.training import TrainingConfig, mine_pairs, train_cross_encoder
from dreammem_bench.locomo import load_locomo
from dreammem_bench.pairs import locomo_query_groups

__all__ = ["train_reranker"]

console = Console()


def train_reranker(
    out: Annotated[Path, typer.Option("--out", help="Folder to save the model in.")],
    data: Annotated[
        Path,
        typer.Option("--data", help="A LoCoMo JSON file (annotated questions).", exists=True, dir_okay=False),
    ],
    epochs: Annotated[float, typer.Option(help="Training epochs.")] = 2.0,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 5e-5,
    negatives: Annotated[int, typer.Option(help="Hard negatives per query.", min=0)] = 3,
    max_length: Annotated[int, typer.Option(help="Tokens per pair.", min=8)] = 64,
    num_layers: Annotated[int | None, typer.Option(help="Keep only the first N layers.", min=1)] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 42,
    observations: Annotated[
        bool, typer.Option(help="Also train on the annotated observations (statement -> turn).")
    ] = True,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Leave out this conversation (sample_id); repeatable.")
    ] = None,
) -> None:
    """Fine-tune a cross-encoder from the packaged MiniLM on annotated LoCoMo data."""
    cfg = TrainingConfig(
        epochs=epochs,
        learning_rate=learning_rate,
        negatives=negatives,
        max_length=max_length,
        num_layers=num_layers,
        seed=seed,
    )
    left_out = set(exclude or ())
    conversations = [c for c in load_locomo(data) if c.sample_id not in left_out]
    groups = locomo_query_groups(conversations, depth=cfg.depth, observations=observations)
    console.print(f"{len(groups)} annotated queries from {len(conversations)} conversations")
    pairs = mine_pairs(groups, negatives=cfg.negatives, seed=seed)
    console.print(f"training on {len(pairs)} pairs")
    folder = train_cross_encoder(pairs, out, config=cfg)
    console.print(f"cross-encoder saved to {folder}")
