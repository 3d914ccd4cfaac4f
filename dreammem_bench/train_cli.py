"""``dreammem train-reranker``: fine-tune the offline cross-encoder on LoCoMo-style data."""

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
    data: Annotated[Path, typer.Option("--data", help="A LoCoMo JSON file.", exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option("--out", help="Folder to save the model in.")],
    epochs: Annotated[float, typer.Option(help="Training epochs.")] = 2.0,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 5e-5,
    negatives: Annotated[int, typer.Option(help="BM25 hard negatives per question.", min=0)] = 3,
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
    """Fine-tune a cross-encoder from the packaged MiniLM on question -> evidence pairs."""
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
    pairs = mine_pairs(
        locomo_query_groups(conversations, depth=cfg.depth, observations=observations),
        negatives=cfg.negatives,
        seed=seed,
    )
    console.print(f"training on {len(pairs)} pairs from {len(conversations)} conversations")
    folder = train_cross_encoder(pairs, out, config=cfg)
    console.print(f"cross-encoder saved to {folder}")
