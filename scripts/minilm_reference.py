"""Write the stored sentence-transformers vectors that the numpy MiniLM is checked against.

    PYTHONPATH=. python scripts/minilm_reference.py      # needs torch: `make test-train`'s venv

The numpy runtime is what every store runs; torch is not installed by ``make test``. So
its parity with sentence-transformers is checked against vectors that sentence-transformers
produced once, kept in ``tests/fixtures/minilm_reference.{json,npy}`` (the texts and versions
in the JSON, one float32 row per text in the ``.npy``, the query last). ``make test-train``
checks that those rows still are what sentence-transformers gives (tests/train).
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

from dreammem.embed.models import SentenceTransformerEmbedder

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
TEXTS_FILE = FIXTURES / "minilm_reference.json"
VECTORS_FILE = FIXTURES / "minilm_reference.npy"

TEXTS = [
    "I prefer Excel reports over PDF.",
    "Order #48213 ships on 2024-07-15.",
    "ok",
    "",
    "我叫李明，住在北京。",
    "Ünïcödé — emoji 🎉 and punctuation!!!",
    "The quarterly analytics budget must not exceed fifty thousand US dollars. " * 40,  # past 256 tokens
]
QUERY = "which report format?"


def reference_vectors(embedder: SentenceTransformerEmbedder, texts: list[str], query: str) -> np.ndarray:
    """The documents' vectors, then the query's, as sentence-transformers gives them."""
    return np.vstack([embedder.embed_documents(texts), embedder.embed_query(query)[None, :]])


def main() -> None:
    """Encode the texts on torch and write both fixture files."""
    embedder = SentenceTransformerEmbedder()
    vectors = reference_vectors(embedder, TEXTS, QUERY).astype(np.float32)
    meta = {
        "model": embedder.name,
        "texts": TEXTS,
        "query": QUERY,
        "made_with": {p: version(p) for p in ("sentence-transformers", "torch", "transformers")},
    }
    TEXTS_FILE.write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    np.save(VECTORS_FILE, vectors, allow_pickle=False)
    print(f"{vectors.shape[0]} vectors of {vectors.shape[1]} written to {VECTORS_FILE}")


if __name__ == "__main__":
    main()
