"""IVF recall@10 against exact, and search latency, as one user's shard grows.

The library's :class:`~dreammem.stores.faiss_index.FaissVectorIndex`, one user, vectors
added 1,000 at a time as the store adds them (so the shard trains at 20k, 80k and 320k
vectors, as it does in a store). The vectors are those of ``benchmarks/scale.py``: a
pooled real MiniLM encoding per text plus noise (``--pool-file`` from a scale build).
At each size in ``--sizes`` the shard is searched, with several ``nprobe``, by three
query sets, each against exact search (``IndexFlatIP``) over the same vectors:

- ``bench``: the 200 questions ``scale.py`` measures (57 distinct texts, some asked 9
  times, so each distinct text weighs up to 4.5 % of the figure);
- ``questions``: ``--distinct`` distinct questions of the same forms;
- ``turns``: ``--distinct`` real encodings of unseen synthetic turns (the documents'
  own distribution).

``--builds`` repeats the whole growth with other noise seeds: other builds of the same
code path, as two benchmark sessions make them.

    HF_HUB_OFFLINE=1 python benchmarks/ivf_curve.py --pool-file POOL.npy --json OUT.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from benchmarks.scale import _FORMS, _NAMES, _PLACES, _THINGS, PoolEmbedder, lat, queries, rss_mb
from dreammem.embed.models import resolve_embedder
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem_bench.throughput import synthetic_turns

_BATCH = 1_000


def distinct_questions(count: int, seed: int = 12) -> list[str]:
    """``count`` different questions of the benchmark's forms."""
    texts = sorted(
        {
            form.format(name=name, thing=thing, place=place)
            for form, name, thing, place in itertools.product(_FORMS, _NAMES, _THINGS, _PLACES)
        }
    )
    return random.Random(seed).sample(texts, min(count, len(texts)))


def measure_at(
    index: FaissVectorIndex,
    data: npt.NDArray[np.float32],
    sets: dict[str, npt.NDArray[np.float32]],
    nprobes: list[int],
) -> dict[str, Any]:
    """Every query set against exact search over ``data`` (the shard's vectors, row id = position)."""
    flat = faiss.IndexFlatIP(data.shape[1])
    flat.add(data)
    shard = index._shards["u0"]  # noqa: SLF001 (its list count and training size)
    out: dict[str, Any] = {"vectors": len(data), "trained_at": shard.trained_at, "nlist": shard.nlist}
    default = index.ann
    out["default probes"] = index.probes("u0")
    settings = {"default": default} | {
        f"nprobe {n}": replace(default, nprobe=n, probe_share=0.0) for n in nprobes
    }
    for name, qv in sets.items():
        _, truth = flat.search(qv, 10)
        rows: dict[str, Any] = {}
        for setting, ann in settings.items() if shard.nlist else [("exact", default)]:
            index.ann = ann
            hits, times, per_query = 0, [], []
            for q, want in zip(qv, truth, strict=True):
                t0 = time.perf_counter()
                got = index.search("u0", q, 10)
                times.append((time.perf_counter() - t0) * 1000)
                found = len({i for i, _ in got} & set(want.tolist()))
                hits += found
                per_query.append(found / 10)
            rows[setting] = {
                "recall@10": round(hits / (10 * len(qv)), 4),
                "worst query": round(min(per_query), 2),
                "search": lat(times),
            }
        out[name] = rows
    index.ann = default
    return out


def grow(
    embedder: PoolEmbedder,
    texts: list[str],
    sizes: list[int],
    sets: dict[str, npt.NDArray[np.float32]],
    nprobes: list[int],
) -> list[dict[str, Any]]:
    """Add the texts' vectors 1,000 at a time; measure at every size in ``sizes``."""
    index = FaissVectorIndex(embedder.dim)
    data = np.empty((max(sizes), embedder.dim), dtype=np.float32)
    points: list[dict[str, Any]] = []
    start = time.perf_counter()
    for lo in range(0, max(sizes), _BATCH):
        vectors = embedder.embed_documents(texts[lo : lo + _BATCH])
        data[lo : lo + len(vectors)] = vectors
        index.add("u0", range(lo, lo + len(vectors)), vectors)
        size = lo + len(vectors)
        if size in sizes:
            point = {"build_s": round(time.perf_counter() - start, 1)}
            point.update(measure_at(index, data[:size], sets, nprobes))
            points.append(point)
            print(json.dumps(point), file=sys.stderr, flush=True)
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool-file", required=True, help="the pool a scale.py build encoded")
    parser.add_argument("--noise", type=float, default=0.02)
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    parser.add_argument(
        "--sizes", type=ints, default=[20_000, 50_000, 80_000, 200_000, 320_000, 640_000, 1_000_000]
    )
    parser.add_argument("--nprobes", type=ints, default=[8, 16, 32, 64, 96, 128])
    parser.add_argument(
        "--builds", type=ints, default=[5], help="noise seeds, one growth each (5: scale.py's)"
    )
    parser.add_argument("--distinct", type=int, default=300)
    parser.add_argument("--json")
    args = parser.parse_args()
    real = resolve_embedder("minilm")
    pool = np.load(args.pool_file, allow_pickle=False)
    bench = [text for _, text in queries(200, 1)]
    encode = {text: real.embed_query(text) for text in {*bench, *distinct_questions(args.distinct)}}
    sets = {
        "bench": np.stack([encode[t] for t in bench]),
        "questions": np.stack([encode[t] for t in distinct_questions(args.distinct)]),
        "turns": np.stack([real.embed_query(t) for t in synthetic_turns(args.distinct, seed=303)]),
    }
    texts = synthetic_turns(max(args.sizes), seed=7)
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "builds": {}}
    for seed in args.builds:
        embedder = PoolEmbedder(real, pool, args.noise, seed=seed)
        report["builds"][str(seed)] = grow(embedder, texts, sorted(args.sizes), sets, args.nprobes)
    report["rss_mb"] = rss_mb()
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
