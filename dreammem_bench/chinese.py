"""Chinese recall: which embedder and which keyword tokenizer serve Chinese users.

The data is a small hand-written set shipped with DreamMem (``data/zh_pairs.json``):
30 everyday Chinese memories, each with a paraphrased question that shares few
characters with it. For each question, every memory of the set is a candidate; a
hit@k is the question's own memory among the top k. Embedders are compared by
cosine ranking; tokenizers by BM25 (``bm25s``) over the tokens each produces.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np

from dreammem.embed.base import Embedder
from dreammem.text.tokenize import STOPWORDS, tokenize

__all__ = ["TOKENIZERS", "ChineseScore", "load_pairs", "score_embedder", "score_tokenizer"]

_HAN = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z0-9]+")


@dataclass(frozen=True, slots=True)
class ChineseScore:
    """hit@1 and hit@3 of one system on the set, and its indexing speed."""

    name: str
    hit_at_1: float
    hit_at_3: float
    docs_per_s: float | None = None


def load_pairs() -> list[tuple[str, str]]:
    """The shipped (memory, question) pairs."""
    raw = resources.files("dreammem_bench").joinpath("data/zh_pairs.json").read_text(encoding="utf-8")
    return [(item["memory"], item["question"]) for item in json.loads(raw)]


def _dreammem(text: str) -> list[str]:
    return [t for t in tokenize(text) if t not in STOPWORDS]


def _words_and_chars(text: str) -> list[str]:
    return [t for t in tokenize(text, cjk_chars=True) if t not in STOPWORDS]


def _bigrams(text: str) -> list[str]:
    out: list[str] = []
    for run in _HAN.findall(text):
        if "\u4e00" <= run[0] <= "\u9fff":
            out += [run[i : i + 2] for i in range(len(run) - 1)] or [run]
        else:
            out.append(run.lower())
    return out


def _unigrams(text: str) -> list[str]:
    return [c for c in text if "\u4e00" <= c <= "\u9fff" and c not in STOPWORDS]


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "DreamMem (jieba search-mode words)": _dreammem,
    "jieba words + single characters": _words_and_chars,
    "character bigrams": _bigrams,
    "single characters": _unigrams,
}


def _hits(rankings: Sequence[Sequence[int]]) -> tuple[float, float]:
    n = len(rankings)
    at1 = sum(1 for i, order in enumerate(rankings) if order and order[0] == i)
    at3 = sum(1 for i, order in enumerate(rankings) if i in order[:3])
    return at1 / n, at3 / n


def score_embedder(embedder: Embedder, pairs: Sequence[tuple[str, str]]) -> ChineseScore:
    """Rank every memory by cosine similarity to each question."""
    start = time.perf_counter()
    docs = embedder.embed_documents([m for m, _ in pairs])
    speed = len(pairs) / (time.perf_counter() - start)
    rankings = [list(np.argsort(-(docs @ embedder.embed_query(q)))) for _, q in pairs]
    at1, at3 = _hits(rankings)
    return ChineseScore(embedder.name, at1, at3, speed)


def score_tokenizer(name: str, pairs: Sequence[tuple[str, str]]) -> ChineseScore:
    """Rank every memory by BM25 over the tokens of one tokenizer."""
    import bm25s  # noqa: PLC0415 - heavy (scipy): only the BM25 baselines need it

    tok = TOKENIZERS[name]
    retriever = bm25s.BM25()
    retriever.index([tok(m) for m, _ in pairs], show_progress=False)
    rankings: list[list[int]] = []
    for _, question in pairs:
        terms = [t for t in tok(question) if t in retriever.vocab_dict]
        if not terms:
            rankings.append([])
            continue
        docs, scores = retriever.retrieve([terms], k=3, show_progress=False)
        rankings.append([int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0])
    at1, at3 = _hits(rankings)
    return ChineseScore(name, at1, at3)
