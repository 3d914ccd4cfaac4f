"""``python -m dreammem_bench.session_context``: whether a turn's session helps rank it, offline.

Reads candidates recorded by ``python -m dreammem_bench.train_rank record`` (with their
turn ids) and, by 5 folds by question, compares the learned rank model's 11 shipped features
with the same model given session context, and a session-diverse order after it:

- *list* features, from the other candidates: the share of the list's fused score the other
  candidates of its session hold, 1 / its session's place by that score, the best cosine
  among its session's candidates minus the list's best;
- *whole-session* features, from every turn of its session (MiniLM, as the store embeds them):
  the cosine of the question to the session's centroid (and minus the best session's), the
  best turn's and the mean of the best three turns' cosine, and the cosine to the session's
  text embedded as one (the "MiniLM over sessions" baseline; and minus the best session's);
- *diversity*: the model's order re-made greedily, each place going to the best standardised
  score less ``lambda`` per candidate of its session already placed.

Scores are offline (the recorded fused candidates, no relevance gate, the model's order
alone): turn recall@5/@10 and, over the sessions of the 10 best turns as the bench counts
them, session NDCG@10 and recall_all@10.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import numpy.typing as npt
import typer
from rich.console import Console

from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem.recall.learned_rank import packaged_model
from dreammem_bench.lme_cli import DEFAULT_CACHE, DEFAULT_DATA, split_questions
from dreammem_bench.lme_metrics import score_lme
from dreammem_bench.lme_run import fold_of
from dreammem_bench.longmemeval import LmeQuestion
from dreammem_bench.rank_fit import fit_weights
from dreammem_bench.vector_cache import DiskCachedEmbedder

__all__ = ["app"]

app = typer.Typer(add_completion=False, help=__doc__)
console = Console(width=160)
Matrix = npt.NDArray[np.float64]

SHIPPED = packaged_model().features
"""The shipped model's features (docs/BENCHMARKS.md, session 25)."""
LIST = ("list_support", "list_session_rr", "list_session_similarity")
WHOLE = ("centroid", "centroid_gap", "best_turn", "best_three", "session_text", "session_text_gap")
_METRICS = ("t_any@5", "t_any@10", "ndcg@10", "s_all@10")


@dataclass(frozen=True, slots=True)
class Recorded:
    """The recorded candidates with their extra columns (all by name) and question ids."""

    columns: dict[str, npt.NDArray[np.float64]]
    labels: Matrix
    groups: npt.NDArray[np.str_]
    sessions: list[str]


def _session(turn_id: str) -> str:
    return turn_id.rpartition("#")[0]


def _list_features(rec: Recorded) -> None:
    """The list features of :data:`LIST`, per question, from the recorded fused score and cosine."""
    for name in LIST:
        rec.columns[name] = np.zeros(len(rec.labels))
    for group in dict.fromkeys(rec.groups.tolist()):
        rows = np.where(rec.groups == group)[0]
        score = rec.columns["fused_score"][rows]
        sims = rec.columns["similarity"][rows]
        keys = [rec.sessions[i] or f"row{i}" for i in rows]
        mass: dict[str, float] = {}
        best: dict[str, float] = {}
        for key, value, sim in zip(keys, score, sims, strict=True):
            mass[key] = mass.get(key, 0.0) + float(value)
            best[key] = max(best.get(key, float(sim)), float(sim))
        place = {key: i + 1 for i, key in enumerate(sorted(mass, key=lambda k: -mass[k]))}
        total = sum(mass.values()) or 1.0
        for row, key, value in zip(rows, keys, score, strict=True):
            rec.columns["list_support"][row] = (mass[key] - value) / total
            rec.columns["list_session_rr"][row] = 1.0 / place[key]
            rec.columns["list_session_similarity"][row] = best[key] - float(sims.max())


def _whole_features(rec: Recorded, questions: Mapping[str, LmeQuestion], cache: Path) -> None:
    """The whole-session features of :data:`WHOLE` (vectors from the bench's cache)."""
    for name in WHOLE:
        rec.columns[name] = np.zeros(len(rec.labels))
    embedder = DiskCachedEmbedder(NumpyBertEmbedder(), cache)
    for group in dict.fromkeys(rec.groups.tolist()):
        question = questions[group]
        query = embedder.embed_query(question.question)
        per: dict[str, list[float]] = {}
        kept = [s for s in question.sessions if any(t.content.strip() for t in s.turns)]
        for session in kept:
            vectors = embedder.embed_documents([t.content for t in session.turns if t.content.strip()])
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            centroid = vectors.mean(axis=0)
            sims = np.sort(vectors @ query)[::-1]
            per[session.session_id] = [
                float(centroid @ query / np.linalg.norm(centroid)),
                float(sims[0]),
                float(sims[:3].mean()),
            ]
        whole = embedder.embed_documents([s.text for s in kept])
        whole = whole / np.linalg.norm(whole, axis=1, keepdims=True)
        for session, value in zip(kept, whole @ query, strict=True):
            per[session.session_id].append(float(value))
        best_centroid = max(v[0] for v in per.values())
        best_text = max(v[3] for v in per.values())
        for row in np.where(rec.groups == group)[0]:
            centroid, top, three, text = per.get(rec.sessions[row], [0.0, 0.0, 0.0, 0.0])
            values = (centroid, centroid - best_centroid, top, three, text, text - best_text)
            for name, value in zip(WHOLE, values, strict=True):
                rec.columns[name][row] = value
    embedder.close()


def _held_out(rec: Recorded, features: Sequence[str], l2: float, folds: int) -> Matrix:
    """Each candidate's logit from a model fitted without its question's fold."""
    data = np.column_stack([rec.columns[f] for f in features])
    keys = np.asarray([fold_of(str(g), folds) for g in rec.groups])
    out = np.zeros(len(rec.labels))
    for fold in range(folds):
        train = keys != fold
        mean, scale, beta = fit_weights(data[train], rec.labels[train], rec.groups[train].tolist(), l2=l2)
        out[~train] = ((data[~train] - mean) / scale) @ beta[:-1] + beta[-1]
    return out


def _diverse(rec: Recorded, scores: Matrix, strength: float) -> Matrix:
    """A new order: each place to the best score less ``strength`` per turn of its session placed above."""
    out = scores.copy()
    for group in dict.fromkeys(rec.groups.tolist()):
        rows = list(np.where(rec.groups == group)[0])
        spread = float(scores[rows].std()) or 1.0
        placed: dict[str, int] = {}
        for place in range(len(rows)):
            best = max(rows, key=lambda i: scores[i] / spread - strength * placed.get(rec.sessions[i], 0))
            rows.remove(best)
            out[best] = -float(place)
            placed[rec.sessions[best]] = placed.get(rec.sessions[best], 0) + 1
    return out


def _score(
    rec: Recorded, questions: Mapping[str, LmeQuestion], scores: Matrix, folds: int
) -> dict[str, Matrix]:
    """Per metric: the mean over answerable questions, then per fold."""
    per: dict[str, list[list[float]]] = {m: [[] for _ in range(folds)] for m in _METRICS}
    for group in dict.fromkeys(rec.groups.tolist()):
        question = questions[group]
        rows = np.where(rec.groups == group)[0]
        if not question.answer_sessions or not rec.labels[rows].any():
            continue
        order = rows[np.argsort(-scores[rows], kind="stable")][:10]
        items = [(rec.sessions[i], str(i)) for i in order]
        gold = [str(i) for i in rows if rec.labels[i] >= 1.0]
        found = score_lme(items, question.answer_sessions, gold)
        for metric in _METRICS:
            per[metric][fold_of(group, folds)].append(found[metric])
    return {
        m: np.asarray([np.mean([v for f in per[m] for v in f]), *(np.mean(f) for f in per[m])])
        for m in _METRICS
    }


@app.command()
def measure(
    recorded: Annotated[Path, typer.Option(help="Candidates from `train_rank record` (with turn ids).")],
    data: Annotated[Path, typer.Option(help="LongMemEval JSON (.json or .json.gz).")] = DEFAULT_DATA,
    split: Annotated[str, typer.Option(help="The split the candidates were recorded on.")] = "train",
    l2: Annotated[float, typer.Option(help="L2 strength.")] = 0.1,
    folds: Annotated[int, typer.Option(min=2)] = 5,
    cache: Annotated[Path, typer.Option(help="File of vectors kept across runs.")] = DEFAULT_CACHE,
) -> None:
    """Offline fold scores of the shipped features with and without session context."""
    held = np.load(recorded)
    names = [str(n) for n in held["names"]]
    if "turn_ids" not in held:
        raise typer.BadParameter(f"{recorded} has no turn ids: record again")
    rec = Recorded(
        columns={n: held["features"][:, i].astype(np.float64) for i, n in enumerate(names)},
        labels=held["labels"].astype(np.float64),
        groups=held["groups"].astype(str),
        sessions=[_session(str(t)) for t in held["turn_ids"]],
    )
    questions = {q.question_id: q for q in split_questions(data, split)}
    _list_features(rec)
    _whole_features(rec, questions, cache)
    base = _held_out(rec, SHIPPED, l2, folds)
    runs: list[tuple[str, Callable[[], Matrix]]] = [
        ("fused order", lambda: rec.columns["fused_score"]),
        ("shipped features", lambda: base),
        ("+ list features", lambda: _held_out(rec, (*SHIPPED, *LIST), l2, folds)),
        *((f"+ {w}", (lambda w=w: _held_out(rec, (*SHIPPED, w), l2, folds))) for w in WHOLE),
        ("+ all whole-session", lambda: _held_out(rec, (*SHIPPED, *WHOLE), l2, folds)),
        *((f"diversity {s}", (lambda s=s: _diverse(rec, base, s))) for s in (0.25, 0.5, 1.0)),
    ]
    console.print(f"{recorded}: offline, {folds} folds by question; all questions (per fold)")
    print("| order | " + " | ".join(_METRICS) + " |")
    print("|---" * (len(_METRICS) + 1) + "|")
    for name, make in runs:
        found = _score(rec, questions, make(), folds)
        cells = (f"{v[0]:.3f} ({' '.join(f'{x:.2f}' for x in v[1:])})" for v in found.values())
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    app()
