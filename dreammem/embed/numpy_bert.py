"""all-MiniLM-L6-v2 in plain numpy: the same vectors as sentence-transformers, without torch.

The default model is a 6-layer BERT (22M parameters) with mean pooling. Its forward
pass is a few matrix products, so numpy runs it with no torch, transformers or
sentence-transformers import: a process holding a store stays small and the first
recall is fast (docs/BENCHMARKS.md, footprint). The weights are read from the
packaged ``model.safetensors`` and the text is cut by the packaged ``tokenizer.json``
(the Rust ``tokenizers`` library), exactly as sentence-transformers does; the
vectors match its output to about 1e-6 (``tests/integration/test_numpy_bert.py``).

Any BERT-type sentence-transformers folder with mean pooling loads the same way;
other architectures need :class:`~dreammem.embed.models.SentenceTransformerEmbedder`.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dreammem.embed.base import normalize_rows
from dreammem.errors import ConfigError

__all__ = ["NumpyBertEmbedder"]

Array = npt.NDArray[np.float32]
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


_CHUNK = 1 << 15
"""Elements per GELU step: its scratch arrays stay in the CPU cache (4x faster than whole-array steps)."""


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, x * Phi(x), in place on ``x`` (the widest array of the forward pass)."""
    x = np.ascontiguousarray(x)  # no copy for a dense output; reshape(-1) must be a view
    flat = x.reshape(-1)
    for start in range(0, flat.size, _CHUNK):
        _gelu_inplace(flat[start : start + _CHUNK])
    return x


def _gelu_inplace(x: Array) -> None:
    """GELU on a 1-D view, erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7)."""
    a = np.abs(x)
    a *= np.float32(1.0 / math.sqrt(2.0))
    t = a * np.float32(_ERF_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(_ERF_A[4])
    for coef in reversed(_ERF_A[:4]):
        poly += np.float32(coef)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # now 1 - erf(|x| / sqrt 2)
    np.copysign(poly, x, out=poly)
    np.subtract(np.copysign(np.float32(1.0), x), poly, out=poly)  # erf(x / sqrt 2)
    poly += 1.0
    poly *= 0.5  # Phi(x)
    x *= poly


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    """Layer normalisation over the last axis, in place on ``x``."""
    x -= x.mean(axis=-1, keepdims=True)
    scale = np.square(x).mean(axis=-1, keepdims=True)
    scale += eps
    np.sqrt(scale, out=scale)
    x /= scale
    x *= weight
    x += bias
    return x


class NumpyBertEmbedder:
    """A mean-pooled BERT sentence encoder on numpy (the default MiniLM when ``model_dir`` is None).

    Args:
        model_dir: A sentence-transformers folder (``config.json``, ``tokenizer.json``,
            ``model.safetensors``); ``None`` is the packaged all-MiniLM-L6-v2.
        batch_size: Texts per forward pass (texts are grouped by length first).
        name: The model name stored with the vectors; defaults to the folder's model
            name, ``all-MiniLM-L6-v2`` for the packaged one, so stores built with the
            torch runtime open unchanged.
        query_threads: BLAS threads for one query (``None``: numpy's setting). One short
            query gains nothing from more, and on a busy 2-core machine the threads'
            hand-off made a query ~20x slower (1.0 s against 0.04 s at load 26).

    Raises:
        ConfigError: the folder is not a BERT model with mean pooling.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        batch_size: int = 64,
        name: str | None = None,
        query_threads: int | None = 1,
    ) -> None:
        from safetensors.numpy import load_file  # noqa: PLC0415 - loaded with the model, not on import
        from threadpoolctl import ThreadpoolController  # noqa: PLC0415 - loaded with the model, not on import
        from tokenizers import Tokenizer  # noqa: PLC0415 - loaded with the model, not on import

        from dreammem.embed.models import MINILM, default_minilm_path  # noqa: PLC0415 - embed.models imports this module lazily (cycle)

        folder = default_minilm_path() if model_dir is None else Path(model_dir)
        self.name = name or (MINILM if model_dir is None else folder.name)
        self.batch_size = batch_size
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            max_len = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            pooling = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            weights = load_file(str(folder / "model.safetensors"))
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"cannot load a BERT sentence encoder from {folder}: {exc}") from exc
        if config.get("model_type") != "bert" or not pooling.get("pooling_mode_mean_tokens"):
            raise ConfigError(f"{folder} is not a mean-pooled BERT model; use SentenceTransformerEmbedder")
        self.dim = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._max_len = int(max_len.get("max_seq_length", 256))
        prefix = "" if "embeddings.word_embeddings.weight" in weights else "bert."
        self._w = {k.removeprefix(prefix): np.asarray(v, dtype=np.float32) for k, v in weights.items()}
        for layer in range(self._layers):  # pre-transpose every dense weight once: x @ W.T
            for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                         "attention.output.dense", "intermediate.dense", "output.dense"):  # fmt: skip
                key = f"encoder.layer.{layer}.{part}.weight"
                self._w[key] = np.ascontiguousarray(self._w[key].T)
        self._tokenizer.no_padding()  # padded here, to the longest text of each batch
        self._tokenizer.enable_truncation(self._max_len)
        self.query_threads = query_threads
        self._threads = ThreadpoolController()
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str]) -> Array:
        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros((len(texts), width), dtype=np.float32)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = enc.ids, enc.type_ids, enc.attention_mask
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(width)][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._norm(x, "embeddings.LayerNorm.")
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :]
        for layer in range(self._layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        summed = (x * mask[:, :, None]).sum(axis=1)
        return normalize_rows(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9))

    def _layer(self, x: Array, bias: Array, p: str) -> Array:
        w = self._w
        batch, width, dim = x.shape
        head = dim // self._heads

        # Every product on contiguous arrays, 2-D where it can be: numpy hands those to BLAS,
        # while a stacked product over a transposed view falls back to a slow loop.
        def dense(h: Array, name: str) -> Array:
            flat = h.reshape(-1, h.shape[-1]) @ w[f"{p}{name}.weight"] + w[f"{p}{name}.bias"]
            out: Array = flat.reshape(batch, width, -1)
            return out

        def split(h: Array, *axes: int) -> Array:
            out: Array = np.ascontiguousarray(h.reshape(batch, width, self._heads, head).transpose(*axes))
            return out

        q = split(dense(x, "attention.self.query"), 0, 2, 1, 3)
        k_t = split(dense(x, "attention.self.key"), 0, 2, 3, 1)
        v = split(dense(x, "attention.self.value"), 0, 2, 1, 3)
        scores = q @ k_t / np.float32(math.sqrt(head)) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attn = scores / scores.sum(axis=-1, keepdims=True)
        context = np.ascontiguousarray((attn @ v).transpose(0, 2, 1, 3)).reshape(batch, width, dim)
        x = self._norm(dense(context, "attention.output.dense") + x, f"{p}attention.output.LayerNorm.")
        hidden = _gelu(dense(x, "intermediate.dense"))
        return self._norm(dense(hidden, "output.dense") + x, f"{p}output.LayerNorm.")

    def _norm(self, x: Array, prefix: str) -> Array:
        return _layer_norm(x, self._w[prefix + "weight"], self._w[prefix + "bias"], self._eps)

    def embed_documents(self, texts: Sequence[str]) -> Array:
        """Encode texts in batches of similar length; rows come back in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                out[chunk] = self._encode([texts[i] for i in chunk])
        return out

    def embed_query(self, text: str) -> Array:
        """Encode one query (on ``query_threads`` BLAS threads)."""
        if self.query_threads is None:
            row: Array = self.embed_documents([text])[0]
            return row
        with self._threads.limit(limits=self.query_threads, user_api="blas"):
            row = self.embed_documents([text])[0]
        return row
