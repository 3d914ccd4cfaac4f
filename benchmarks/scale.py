"""A million memories: build time, recall latency, memory and vector-index recall@10.

Encoding a million texts on two CPU cores takes hours, so the documents' vectors come
from a pool of real encodings: ``--pool`` synthetic chat turns are encoded once with
MiniLM (timed: the bare encoder's rate), and each stored record gets the vector of one
pool text (chosen by a hash of its own text) plus Gaussian noise of ``--noise`` per
dimension, renormalised. Everything else is real: every record goes through
``DreamMemory.add_many`` (SQLite, FTS5, entities, the embedded graph, the FAISS shard
with its IVF training), and every query is a real MiniLM query encoding followed by
the full ``recall`` pipeline (vector, keyword, temporal and graph paths; no reranker).

The build runs in this process; the measurements in a fresh one that opens the store
from disk, so its RSS is what a process holding the store open pays. Baselines in
that run: the bare query encoder, and encoder + exact FAISS (``IndexFlatIP``) over the
same user's vectors. Vector-index recall@10 is the library's search against that
exact search on the same query vectors, at the default (``nprobe``, or ``probe_share``
of the lists when more) and for several fixed ``nprobe``.

    HF_HUB_OFFLINE=1 nice -n 5 python benchmarks/scale.py --store /tmp/scale1 --memories 1000000 --users 1
    HF_HUB_OFFLINE=1 nice -n 5 python benchmarks/scale.py --store /tmp/scale2 --memories 1000000 --users 1000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig
from dreammem.embed import Embedder
from dreammem.embed.base import normalize_rows
from dreammem.embed.models import resolve_embedder
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem_bench.metrics import percentile
from dreammem_bench.throughput import synthetic_turns, timed_ms

_BATCH = 1_000
_START = datetime(2024, 1, 1, tzinfo=UTC)
_FORMS = (
    "What did {name} order?",
    "How much was spent on the {thing}?",
    "When does the {thing} arrive in {place}?",
    "Who moved to {place}?",
    "What is the budget for the {thing}?",
    "Where did I meet {name}?",
)
_NAMES = ("Mia", "Tom", "Aiko", "Ravi", "Lena", "Omar", "Sofia", "Jonas", "Chen", "Priya")
_PLACES = ("Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Austin", "Hanoi", "Oslo")
_THINGS = ("GPU server", "laptop", "flight", "hotel", "camera", "bike", "cello", "tent")


class PoolEmbedder:
    """Documents: a pooled real encoding picked by a hash of the text, plus noise; queries: the real model."""

    def __init__(self, real: Embedder, pool: npt.NDArray[np.float32], noise: float, seed: int = 5) -> None:
        self.name = real.name
        self.dim = real.dim
        self._real = real
        self._pool = pool
        self._noise = noise
        self._rng = np.random.default_rng(seed)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [zlib.crc32(t.encode("utf-8")) % len(self._pool) for t in texts]
        jitter = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32) * self._noise
        return normalize_rows(self._pool[rows] + jitter)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._real.embed_query(text)


def rss_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak (Linux ``/proc``)."""
    fields = dict(
        line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line
    )
    return {key: round(int(fields[key].split()[0]) / 1024, 1) for key in ("VmRSS", "VmHWM")}


def queries(count: int, users: int, seed: int = 11) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        form = rng.choice(_FORMS)
        text = form.format(name=rng.choice(_NAMES), thing=rng.choice(_THINGS), place=rng.choice(_PLACES))
        out.append((f"u{rng.randrange(users)}", text))
    return out


def build(args: argparse.Namespace) -> dict[str, Any]:
    real = resolve_embedder("minilm")
    pool_texts = synthetic_turns(args.pool, seed=101)
    cache = Path(args.pool_file) if args.pool_file else None
    if cache is not None and cache.exists():  # encoded by an earlier run: its rate is in that run's report
        pool, encode_s = np.load(cache, allow_pickle=False), float("nan")
    else:
        start = time.perf_counter()
        pool = np.concatenate(
            [real.embed_documents(pool_texts[lo : lo + 256]) for lo in range(0, args.pool, 256)]
        )
        encode_s = time.perf_counter() - start
        if cache is not None:
            np.save(cache, pool, allow_pickle=False)
    nn = pool[:500] @ pool.T
    np.fill_diagonal(nn[:, :500], -1)
    embedder = PoolEmbedder(real, pool, args.noise)
    probe = embedder.embed_documents(pool_texts[:500])
    rows = [zlib.crc32(t.encode("utf-8")) % len(pool) for t in pool_texts[:500]]
    config = DreamMemConfig.model_validate({"write": {"resolve_updates": not args.no_resolve}})
    texts = synthetic_turns(args.memories, seed=7)
    per_user = args.memories // args.users
    start = time.perf_counter()
    with DreamMemory(args.store, config=config, embedder=embedder) as memory:
        for lo in range(args.start, args.memories, _BATCH):
            memory.add_many(
                {
                    "content": text,
                    "user_id": f"u{(lo + i) // per_user}",
                    "session_id": f"s{(lo + i) // 20}",
                    "event_time": _START + timedelta(minutes=(lo + i) % per_user),
                }
                for i, text in enumerate(texts[lo : lo + _BATCH])
            )
            if lo % 50_000 == 0:
                print(f"  {lo:,} stored, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        stored = memory.engine.vector_count()
    build_s = time.perf_counter() - start
    return {
        "memories": args.memories,
        "users": args.users,
        "started_at": args.start,
        "vectors": stored,
        "pool": args.pool,
        "pool_encode_per_s": round(args.pool / encode_s, 1),
        "pool_nn_cos_p50": round(float(np.median(nn.max(axis=1))), 3),
        "noise": args.noise,
        "copy_to_source_cos_p50": round(float(np.median(np.sum(probe * pool[rows], axis=1))), 3),
        "resolve_updates": not args.no_resolve,
        "build_s": round(build_s, 1),
        "build_per_s": round((args.memories - args.start) / build_s, 1),
        "build_rss_mb": rss_mb(),
        "store_mb": round(
            sum(f.stat().st_size for f in Path(args.store).rglob("*") if f.is_file()) / 2**20, 1
        ),
    }


def lat(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 2), "p95": round(percentile(values, 95), 2)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    real = resolve_embedder("minilm")
    asks = queries(args.queries, args.users)
    now = _START + timedelta(days=800)
    out: dict[str, Any] = {"rss_before_open_mb": rss_mb()}
    start = time.perf_counter()
    with DreamMemory(args.store, embedder=real) as memory:
        memory.recall("warm up", user_id="u0", k=10, now=now)
        out["open_s"] = round(time.perf_counter() - start, 1)
        out["rss_open_mb"] = rss_mb()
        index = memory.engine.vector_index
        assert isinstance(index, FaissVectorIndex)
        out["encoder"] = lat(timed_ms([lambda q=q: real.embed_query(q) for _, q in asks]))
        stages: dict[str, list[float]] = {}

        def ask(user: str, text: str) -> None:
            for stage, ms in memory.recall(text, user_id=user, k=10, now=now).timings_ms.items():
                stages.setdefault(stage, []).append(ms)

        out["recall"] = lat(timed_ms([lambda u=u, q=q: ask(u, q) for u, q in asks]))
        out["stages"] = {stage: lat(values) for stage, values in sorted(stages.items())}
        out["rss_after_recall_mb"] = rss_mb()
        qvec = {q: real.embed_query(q) for _, q in asks}
        out["approximate"] = index.is_approximate("u0")
        out["index"] = index_recall(index, asks, qvec, args.nprobes)
    return out


def index_recall(
    index: FaissVectorIndex,
    asks: Sequence[tuple[str, str]],
    qvec: dict[str, npt.NDArray[np.float32]],
    nprobes: list[int],
) -> dict[str, Any]:
    """Library search against exact FAISS over the same users' vectors, per nprobe."""
    by_user: dict[str, list[str]] = {}
    for user, text in asks:
        by_user.setdefault(user, []).append(text)
    truth: dict[tuple[str, str], set[int]] = {}
    exact_ms: list[float] = []
    for user, texts in by_user.items():
        ids, vecs = index.vectors(user)
        flat = faiss.IndexIDMap2(faiss.IndexFlatIP(index.dim))
        flat.add_with_ids(vecs, ids)
        del vecs
        for text in texts:
            t0 = time.perf_counter()
            _, found = flat.search(qvec[text][None, :], 10)
            exact_ms.append((time.perf_counter() - t0) * 1000)
            truth[(user, text)] = {int(i) for i in found[0] if i >= 0}
        del flat
    result: dict[str, Any] = {"exact_search": lat(exact_ms)}
    default = index.ann
    # The default first (nprobe, or probe_share of the lists when more), then fixed nprobes.
    settings = {"default": default} | {
        f"nprobe {n}": replace(default, nprobe=n, probe_share=0.0) for n in nprobes
    }
    for name, ann in settings.items():
        index.ann = ann
        hits, times = 0, []
        for user, text in asks:
            t0 = time.perf_counter()
            got = index.search(user, qvec[text], 10)
            times.append((time.perf_counter() - t0) * 1000)
            hits += len({i for i, _ in got} & truth[(user, text)])
        result[name] = {"recall@10": round(hits / (10 * len(asks)), 4), "search": lat(times)}
    index.ann = default
    result["default"]["probes"] = {user: index.probes(user) for user in list(by_user)[:3]}
    return result


def index_only(args: argparse.Namespace) -> dict[str, Any]:
    """The library's FAISS index alone, one user: the same vectors, no store around it."""
    real = resolve_embedder("minilm")
    embedder = PoolEmbedder(real, np.load(args.pool_file, allow_pickle=False), args.noise)
    texts = synthetic_turns(args.memories, seed=7)
    index = FaissVectorIndex(real.dim)
    start = time.perf_counter()
    for lo in range(0, args.memories, _BATCH):
        batch = texts[lo : lo + _BATCH]
        index.add("u0", range(lo, lo + len(batch)), embedder.embed_documents(batch))
    build_s = time.perf_counter() - start
    del texts
    asks = queries(args.queries, 1)
    qvec = {q: real.embed_query(q) for _, q in asks}
    out: dict[str, Any] = {"vectors": index.count("u0"), "build_s": round(build_s, 1), "rss_mb": rss_mb()}
    out["index"] = index_recall(index, asks, qvec, args.nprobes)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=1)
    parser.add_argument("--pool", type=int, default=20_000)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--nprobes", type=lambda s: [int(x) for x in s.split(",")], default=[16, 32, 64, 128])
    parser.add_argument("--no-resolve", action="store_true", help="skip write-time update resolution")
    parser.add_argument("--phase", choices=["all", "build", "measure", "index"], default="all")
    parser.add_argument(
        "--start",
        type=int,
        default=0,
        help="turns an earlier build with the same arguments stored (a multiple of 1,000): add the rest",
    )
    parser.add_argument("--pool-file", help="an .npy to keep the encoded pool in (reused by later runs)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.start % _BATCH or not 0 <= args.start < args.memories:
        parser.error(f"--start must be a multiple of {_BATCH:,} below --memories")
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if args.phase == "index":
        report["index_only"] = index_only(args)
    if args.phase in {"all", "build"}:
        report["build"] = build(args)
        print(json.dumps(report["build"], indent=1), flush=True)
    if args.phase == "all":
        cmd = [sys.executable, __file__, *sys.argv[1:], "--phase", "measure"]
        report["measure"] = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    elif args.phase == "measure":
        print(json.dumps(measure(args)))
        return
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
