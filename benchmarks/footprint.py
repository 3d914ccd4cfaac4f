"""What a user pays: install size, memory of a process holding a store, first recall time.

    HF_HUB_OFFLINE=1 python benchmarks/footprint.py [--runs 3]

- install: the files of every distribution a plain ``pip install dreammem`` pulls in
  (the closure of the default requirements in ``pyproject.toml``, no extras), summed
  from the current environment's installed files; torch's CUDA libraries (``nvidia-*``) are listed
  apart, since a CPU-only torch does not bring them.
- process: a fresh interpreter opens a 5-record store and recalls once; it reports
  the import time, the first recall (model load included: cold) and its RSS, for
  each embedding runtime (``numpy``: the packaged MiniLM on numpy; ``torch``: the
  same model through sentence-transformers; ``default``: what ``DreamMemory(path)``
  picks), and then the time to embed 128 turns (ingest cost). Medians over ``--runs``
  fresh processes.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from dreammem import DreamMemory
from dreammem.embed.numpy_bert import NumpyBertEmbedder

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import dreammem
from dreammem import DreamMemory
t_import = time.perf_counter() - t0
runtime, path = sys.argv[1], sys.argv[2]
t1 = time.perf_counter()
if runtime == "numpy":
    from dreammem.embed.numpy_bert import NumpyBertEmbedder
    embedder = NumpyBertEmbedder()
elif runtime == "torch":
    from dreammem.embed.models import SentenceTransformerEmbedder
    embedder = SentenceTransformerEmbedder()
else:
    embedder = None
memory = DreamMemory(path, embedder=embedder)
hits = memory.recall("which report format does Mia prefer?", user_id="mia", k=3)
t_recall = time.perf_counter() - t1
status = open("/proc/self/status").read()
fields = dict(line.split(":", 1) for line in status.splitlines())
rss = {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}
turn = "Turn {}: we talked about order #{}, the budget and the trip to Oslo on day {}. "
turns = [turn.format(n, 4000 + n, n % 28 + 1) * (1 + n % 3) for n in range(128)]
t2 = time.perf_counter()
memory.embedder.embed_documents(turns)
t_embed = time.perf_counter() - t2
names = ("torch", "transformers", "sentence_transformers", "langchain_core", "llama_index")
heavy = sorted(m for m in names if m in sys.modules)
print(json.dumps({
    "import_s": t_import, "first_recall_s": t_recall, "embed_128_s": t_embed,
    "rss_mb": rss["VmRSS"], "peak_mb": rss["VmHWM"], "model": memory.stats()["embedding_model"],
    "top": hits[0].record.content, "heavy_modules": heavy,
}))
memory.close()
"""
SEED = [
    "Hi! I'm Mia, I run the data team at Northwind.",
    "I prefer Excel reports over PDF, please.",
    "Our Q3 analytics budget must not exceed 50,000 USD.",
    "Order #48213 for the new GPU server was placed today.",
    "My manager is Tom Becker; he signs off anything above 10k.",
]


def _default_requirements() -> list[str]:
    """The default dependencies declared in this checkout's pyproject.toml (no extras)."""
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return [Requirement(spec).name for spec in data["project"]["dependencies"]]


def _closure(roots: list[str]) -> set[str]:
    """Distribution names a plain install of ``roots`` pulls in (markers evaluated, no extras)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        current = todo.pop()
        key = re.sub(r"[-_.]+", "-", current).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here (a platform-only dependency)
        for spec in requires:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _size_mb(dist_name: str) -> float:
    dist = metadata.distribution(dist_name)
    total = 0
    for file in dist.files or []:
        located = Path(str(dist.locate_file(file)))
        if located.is_file():
            total += located.stat().st_size
    return total / 2**20


def install_report() -> dict[str, object]:
    """Sizes of the default install's distributions, CUDA libraries apart."""
    names = [n for n in sorted(_closure(_default_requirements())) if _installed(n)]
    sizes = {name: _size_mb(name) for name in names}
    cuda = {n: s for n, s in sizes.items() if n.startswith("nvidia-") or n == "triton"}
    rest = {n: s for n, s in sizes.items() if n not in cuda}
    top = sorted(rest.items(), key=lambda item: -item[1])[:8]
    return {
        "distributions": len(sizes),
        "total_mb": round(sum(sizes.values())),
        "cuda_libraries_mb": round(sum(cuda.values())),
        "without_cuda_mb": round(sum(rest.values())),
        "largest": {n: round(s) for n, s in top},
    }


def process_report(runtime: str, store: Path, runs: int) -> dict[str, object]:
    """Medians over fresh processes holding the store."""
    results = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, runtime, str(store)], capture_output=True, text=True, check=True
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    out: dict[str, object] = {
        key: round(statistics.median(float(r[key]) for r in results), 2)
        for key in ("import_s", "first_recall_s", "rss_mb", "peak_mb", "embed_128_s")
    }
    out.update(model=results[0]["model"], top=results[0]["top"], heavy_modules=results[0]["heavy_modules"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--runtimes", nargs="+", default=["torch", "numpy", "default"])
    args = parser.parse_args()
    print(json.dumps({"install": install_report()}, indent=2))

    with tempfile.TemporaryDirectory() as scratch:
        store = Path(scratch) / "store"
        with DreamMemory(store, embedder=NumpyBertEmbedder()) as memory:
            memory.add_many([{"content": text, "user_id": "mia", "session_id": "s1"} for text in SEED])
        for runtime in args.runtimes:
            print(json.dumps({runtime: process_report(runtime, store, args.runs)}), flush=True)


if __name__ == "__main__":
    main()
