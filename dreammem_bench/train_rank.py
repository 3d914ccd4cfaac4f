"""``python -m dreammem_bench.train_rank``: train and measure the learned rank model on LongMemEval.

Only LongMemEval (MIT) is read, by default its ``train`` split (``bench longmemeval
--split train``: the development questions, every 4th of the file, and the held questions
sessions 23 and 24 already scored once); never the ``fresh`` held questions, never LoCoMo.

- ``record``: recall every dev question through the default pipeline and keep each fused
  candidate's features and whether it is an evidence turn (``has_answer``);
- ``fit``: fit the logistic model on the recorded candidates, print its offline score by
  folds (by question, the bench's :func:`~dreammem_bench.lme_run.fold_of`), write its JSON
  (the package's ``dreammem/recall/learned_rank.json`` by default);
- ``folds``: per fold, a model fitted on the other folds' questions recalls that fold's
  questions through the real pipeline (gate and all), beside the default pipeline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem.recall.base import RecallQuery
from dreammem.recall.learned_rank import FEATURES, LearnedRank
from dreammem.recall.scored import Scored
from dreammem_bench.lme_cli import DEFAULT_CACHE, DEFAULT_DATA, split_questions
from dreammem_bench.lme_methods import DreamMemHaystack, LmeMethod
from dreammem_bench.lme_metrics import Item, mean_by_type
from dreammem_bench.lme_run import choose_by_folds, fold_of, run_lme
from dreammem_bench.longmemeval import LmeQuestion
from dreammem_bench.rank_fit import CandidateRecorder, fit_logistic, top_hit_rate
from dreammem_bench.variants import parse_variant
from dreammem_bench.vector_cache import DiskCachedEmbedder

__all__ = ["app"]

app = typer.Typer(add_completion=False, help=__doc__)
console = Console(width=200)
DEFAULT_RECORD = Path(".bench/rank-candidates.npz")
PACKAGED = Path(__file__).resolve().parent.parent / "dreammem" / "recall" / "learned_rank.json"
_METRICS = ("t_any@5", "ndcg@10", "s_any@5", "t_any@10")


_SPLIT_HELP = "Questions: train (dev + the held ones already scored), dev, or held/fresh to look only."


def _recall_config(variant: str) -> RecallConfig:
    base = DreamMemConfig().recall
    recall = parse_variant(variant, base) if variant else base
    return RecallConfig.model_validate({**recall.model_dump(), "learned_rank": True})


@app.command()
def record(
    data: Annotated[Path, typer.Option(help="LongMemEval JSON (.json or .json.gz).")] = DEFAULT_DATA,
    split: Annotated[str, typer.Option(help=_SPLIT_HELP)] = "train",
    limit: Annotated[int | None, typer.Option(help="At most this many questions.", min=1)] = None,
    variant: Annotated[str, typer.Option(help="Recall variant spec (bench --variants syntax).")] = "",
    cache: Annotated[Path, typer.Option(help="File of vectors kept across runs.")] = DEFAULT_CACHE,
    out: Annotated[Path, typer.Option(help="Where the candidates go (.npz).")] = DEFAULT_RECORD,
) -> None:
    """Recall each question of the split and keep its fused candidates' features and labels."""
    recall = _recall_config(variant)
    embedder = DiskCachedEmbedder(NumpyBertEmbedder(), cache)
    dream = DreamMemHaystack(DreamMemConfig(), embedder)
    rows: list[np.ndarray] = []
    labels: list[float] = []
    in_session: list[float] = []
    groups: list[str] = []
    kinds: list[str] = []
    turn_ids: list[str] = []
    start = time.perf_counter()
    questions = split_questions(data, split, limit=limit)
    for number, question in enumerate(questions, 1):
        dream.index(question)
        assert dream.memory is not None
        recorder = CandidateRecorder()
        dream.memory.pipeline.learned = recorder
        dream.rank(question, 10, recall=recall)
        if not recorder.recorded:
            continue
        found = recorder.recorded[-1]
        gold = question.gold_turns
        rows.append(found.features)
        labels.extend(float(any(t in gold for t in turns)) for turns in found.turns)
        sessions = question.answer_sessions
        in_session.extend(
            float(any(t.rpartition("#")[0] in sessions for t in turns)) for turns in found.turns
        )
        groups.extend([question.question_id] * len(found.turns))
        kinds.extend([question.question_type] * len(found.turns))
        turn_ids.extend(turns[0] if turns else "" for turns in found.turns)
        if number % 10 == 0:
            console.print(f"... {number}/{len(questions)} questions, {time.perf_counter() - start:.0f} s")
    dream.close()
    embedder.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        features=np.vstack(rows),
        labels=np.asarray(labels),
        sessions=np.asarray(in_session),
        groups=np.asarray(groups),
        kinds=np.asarray(kinds),
        turn_ids=np.asarray(turn_ids),
        names=np.asarray(FEATURES),
    )
    console.print(f"{len(labels)} candidates of {len(rows)} questions ({int(sum(labels))} evidence) -> {out}")


def _load(path: Path, session_label: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Features, training labels, evidence-turn labels and question ids of the recorded candidates.

    ``session_label``: the label of a candidate that is not an evidence turn but lies in an
    evidence session (0: only evidence turns are positive).
    """
    held = np.load(path)
    if tuple(str(n) for n in held["names"]) != FEATURES:
        raise typer.BadParameter(f"{path} was recorded with other features: record again")
    turns = held["labels"].astype(np.float64)
    sessions = held["sessions"].astype(np.float64) if "sessions" in held else np.zeros_like(turns)
    train = np.maximum(turns, session_label * sessions)
    return held["features"], train, sessions, [str(g) for g in held["groups"]]


def _by_question(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    keys = np.asarray(groups)
    for group in dict.fromkeys(groups):
        mask = keys == group
        out[group] = (x[mask], y[mask])
    return out


def _fold_models(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int, l2: float, features: Sequence[str]
) -> list[LearnedRank]:
    keys = np.asarray([fold_of(g, folds) for g in groups])
    return [
        fit_logistic(
            x[keys != f],
            y[keys != f],
            [g for g, k in zip(groups, keys, strict=True) if k != f],
            l2=l2,
            features=features,
        )
        for f in range(folds)
    ]


def _features(spec: str) -> tuple[str, ...]:
    """All features, or those left after ``-name,-name`` (a feature ablation)."""
    dropped = {s.strip()[1:] for s in spec.split(",") if s.strip().startswith("-")}
    if unknown := dropped - set(FEATURES):
        raise typer.BadParameter(f"unknown features {sorted(unknown)}")
    return tuple(f for f in FEATURES if f not in dropped)


@app.command()
def fit(
    recorded: Annotated[Path, typer.Option(help="Candidates from `record`.")] = DEFAULT_RECORD,
    l2: Annotated[str, typer.Option(help="Comma-separated L2 strengths to compare by folds.")] = "0.1,1,10",
    folds: Annotated[int, typer.Option(min=2)] = 5,
    drop: Annotated[str, typer.Option(help="Features left out, e.g. '-term_share,-log_chars'.")] = "",
    session_label: Annotated[float, typer.Option(help="Label of other turns of evidence sessions.")] = 0.0,
    out: Annotated[Path | None, typer.Option(help="Write the model fitted on every question here.")] = None,
) -> None:
    """Offline fold scores (evidence among the 5 best candidates, no gate); write the model."""
    x, y, sessions, groups = _load(recorded, session_label)
    features = _features(drop)
    questions = _by_question(x, (y >= 1.0).astype(np.float64), groups)
    in_session = [q[1] for q in _by_question(x, sessions, groups).values()]
    fused = FEATURES.index("fused_depth")
    base = [-q[0][:, fused] for q in questions.values()]
    labels = [q[1] for q in questions.values()]

    def line(scores: Sequence[np.ndarray]) -> str:
        turns = f"top-5 {top_hit_rate(scores, labels):.3f}, top-10 {top_hit_rate(scores, labels, 10):.3f}"
        return f"{turns}, evidence session in top-5 {top_hit_rate(scores, in_session):.3f}"

    console.print(f"fused order: {line(base)}")
    strengths = [float(v) for v in l2.split(",")]
    for strength in strengths:
        models = _fold_models(x, y, groups, folds, strength, features)
        scores = [models[fold_of(g, folds)].probabilities(q[0]) for g, q in questions.items()]
        console.print(f"l2 {strength}, held out: {line(scores)}")
    model = fit_logistic(x, y, groups, l2=strengths[0], features=features)
    table = Table(title=f"model on every question, l2 {strengths[0]}")
    table.add_column("feature")
    table.add_column("weight (per standard deviation)", justify="right")
    for name, weight in sorted(zip(model.features, model.weights, strict=True), key=lambda p: -abs(p[1])):
        table.add_row(name, f"{weight:+.3f}")
    console.print(table)
    if out is not None:
        out.write_text(model.to_json() + "\n", encoding="utf-8")
        console.print(f"model written to {out}")


@dataclass(slots=True)
class _Timed:
    """A model whose every ``order`` call is timed (milliseconds, appended to ``spent``)."""

    model: LearnedRank
    spent: list[float]

    def order(self, query: RecallQuery, scored: Sequence[Scored], config: RecallConfig) -> None:
        start = time.perf_counter()
        self.model.order(query, scored, config)
        self.spent.append((time.perf_counter() - start) * 1000)


class FoldLearned:
    """DreamMem's store recalled with the learned rank model of the question's fold (each call timed)."""

    def __init__(
        self, base: DreamMemHaystack, models: Sequence[LearnedRank], recall: RecallConfig, name: str
    ) -> None:
        self.name = name
        self._base = base
        self._models = models
        self._recall = recall
        self.spent_ms: list[float] = []

    def index(self, question: LmeQuestion) -> None:
        """Nothing: the base method's store holds the haystack."""

    def rank(self, question: LmeQuestion, k: int) -> list[Item]:
        """Recall with the model fitted without this question's fold."""
        assert self._base.memory is not None, "index the question first"
        pipeline = self._base.memory.pipeline
        pipeline.learned = _Timed(
            self._models[fold_of(question.question_id, len(self._models))], self.spent_ms
        )
        try:
            return self._base.rank(question, k, recall=self._recall)
        finally:
            pipeline.learned = None


@app.command("folds")
def folds_command(
    recorded: Annotated[Path, typer.Option(help="Candidates from `record`.")] = DEFAULT_RECORD,
    data: Annotated[Path, typer.Option(help="LongMemEval JSON (.json or .json.gz).")] = DEFAULT_DATA,
    split: Annotated[str, typer.Option(help=_SPLIT_HELP)] = "train",
    limit: Annotated[int | None, typer.Option(help="At most this many questions.", min=1)] = None,
    variants: Annotated[
        str,
        typer.Option(help="';'-separated recall variants (bench --variants syntax), each with the models."),
    ] = "",
    l2: Annotated[float, typer.Option(help="L2 strength.")] = 1.0,
    folds: Annotated[int, typer.Option(min=2)] = 5,
    drop: Annotated[str, typer.Option(help="Features left out, e.g. '-term_share'.")] = "",
    session_label: Annotated[float, typer.Option(help="Label of other turns of evidence sessions.")] = 0.0,
    cache: Annotated[Path, typer.Option(help="File of vectors kept across runs.")] = DEFAULT_CACHE,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the numbers here.")] = None,
) -> None:
    """Each fold's questions recalled with a model fitted on the other folds, beside the default."""
    x, y, _, groups = _load(recorded, session_label)
    models = _fold_models(x, y, groups, folds, l2, _features(drop))
    embedder = DiskCachedEmbedder(NumpyBertEmbedder(), cache)
    dream = DreamMemHaystack(DreamMemConfig(), embedder)
    specs = [s.strip() for s in variants.split(";") if s.strip()] or [""]
    learned = [FoldLearned(dream, models, _recall_config(s), f"learned {s}".strip()) for s in specs]
    methods: list[LmeMethod] = [dream, *learned]
    outcomes = run_lme(split_questions(data, split, limit=limit), methods)
    dream.close()
    embedder.close()
    table = Table(title=f"LongMemEval {split}, {folds} folds by question (model fitted without the fold)")
    for column in ("method", "metric", "all questions", "per fold (held out)", "min/median/max"):
        table.add_column(column)
    report: dict[str, object] = {}
    for name in [m.name for m in methods]:
        means = mean_by_type(outcomes[name])
        report[name] = {"by_type": means, "folds": {}}
        for metric in _METRICS:
            choice = choose_by_folds(outcomes, [name], metric, folds=folds)
            low, mid, high = choice.spread
            report[name]["folds"][metric] = choice.held_out  # type: ignore[index]
            table.add_row(
                name,
                metric,
                f"{means['all'][metric]:.3f}",
                " ".join(f"{v:.3f}" for v in choice.held_out),
                f"{low:.3f}/{mid:.3f}/{high:.3f}",
            )
    console.print(table)
    spent = sorted(t for method in learned for t in method.spent_ms)
    p50, p95 = spent[len(spent) // 2], spent[min(len(spent) - 1, int(len(spent) * 0.95))]
    console.print(f"learned rank stage: p50 {p50:.2f} ms, p95 {p95:.2f} ms over {len(spent)} recalls")
    report["learned_rank_ms"] = {"p50": p50, "p95": p95, "recalls": len(spent)}
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    app()
