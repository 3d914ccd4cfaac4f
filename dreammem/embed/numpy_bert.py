"""all-MiniLM-L6-v2 in plain numpy: the same vectors as sentence-transformers, without torch.

The default model is a 6-layer BERT (22M parameters) with mean pooling. Its forward
pass is a few matrix products, so numpy runs it with no torch, transformers or
sentence-transformers import: a process holding a store stays small and the first
recall is fast (docs/BENCHMARKS.md, footprint). The weights are read from the
packaged ``model.safetensors`` and the text is cut by the packaged ``tokenizer.json``
(the Rust ``tokenizers`` library), exactly as sentence-transformers does; the
vectors match its output to about 1e-6 (``tests/integration/test_numpy_bert.py``).

It is no slower than torch: texts go in batches of similar token length (padding to the
longest of a batch of mixed lengths wastes most of the work), batches run side by side
with one BLAS thread each (two BLAS threads on one product spin-wait on a busy machine:
5x the CPU time), query, key and value are one product, and attention runs a few texts
at a time so its scores stay in the CPU cache (docs/BENCHMARKS.md, Session 23).

Any BERT-type sentence-transformers folder with mean pooling loads the same way;
other architectures need :class:`~dreammem.embed.models.SentenceTransformerEmbedder`.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding

from dreammem.embed.base import normalize_rows
from dreammem.errors import ConfigError

__all__ = ["NumpyBertEmbedder", "length_batches"]

Array = npt.NDArray[np.float32]
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


_TOKENS = 4096
"""Padded tokens a batch holds at most (64 texts of up to 64 tokens, 16 of 256)."""
_SCORES = 1 << 20
"""Attention scores computed at once (4 MB of float32): the texts of a batch go in groups of that size."""
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


def length_batches(lengths: Sequence[int], most: int, tokens: int) -> list[list[int]]:
    """Indices grouped by length, shortest first: at most ``most`` a group, and ``tokens`` once padded.

    A text padded to the longest of its group costs that length, so similar lengths go
    together; a group of long texts is cut smaller to keep its arrays cache-sized.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    for index in order:
        if not batches or len(batches[-1]) >= most or (len(batches[-1]) + 1) * lengths[index] > tokens:
            batches.append([])
        batches[-1].append(index)
    return batches


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
        threads: Batches encoded at once, each on one BLAS thread (``None``: as many as
            numpy's BLAS threads when the model loads; 1: one batch after another on one
            BLAS thread). A call that makes one batch runs on numpy's BLAS setting.

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
        threads: int | None = None,
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
        self._fuse_weights()
        self._tokenizer.no_padding()  # padded here, to the longest text of each batch
        self._tokenizer.enable_truncation(self._max_len)
        self.query_threads = query_threads
        self._threads = ThreadpoolController()
        blas = [pool.num_threads for pool in self._threads.select(user_api="blas").lib_controllers]
        self.threads = threads or max([1, *blas])
        self._lock = threading.Lock()

    def _fuse_weights(self) -> None:
        """Pre-transpose every dense weight (``x @ W``) and join query, key and value into one.

        The query part is scaled by 1/sqrt(head size) here, once, instead of every score.
        """
        w, head = self._w, self.dim // self._heads
        scale = np.float32(1.0 / math.sqrt(head))
        for layer in range(self._layers):
            p = f"encoder.layer.{layer}."
            parts = [w.pop(f"{p}attention.self.{name}.weight") for name in ("query", "key", "value")]
            biases = [w.pop(f"{p}attention.self.{name}.bias") for name in ("query", "key", "value")]
            parts[0], biases[0] = parts[0] * scale, biases[0] * scale
            w[f"{p}qkv.weight"] = np.ascontiguousarray(np.concatenate(parts).T)
            w[f"{p}qkv.bias"] = np.concatenate(biases)
            for part in ("attention.output.dense", "intermediate.dense", "output.dense"):
                w[f"{p}{part}.weight"] = np.ascontiguousarray(w[f"{p}{part}.weight"].T)

    def _encode(self, encodings: Sequence[Encoding]) -> Array:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros((len(encodings), width), dtype=np.float32)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = enc.ids, enc.type_ids, enc.attention_mask
        w = self._w
        x = w["embeddings.word_embeddings.weight"][ids]
        x += w["embeddings.position_embeddings.weight"][:width][None, :, :]
        x += w["embeddings.token_type_embeddings.weight"][types]
        x = self._norm(x.reshape(-1, self.dim), "embeddings.LayerNorm.")
        bias = (1.0 - mask) * np.float32(np.finfo(np.float32).min)
        for layer in range(self._layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        summed = (x.reshape(len(encodings), width, self.dim) * mask[:, :, None]).sum(axis=1)
        return normalize_rows(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9))

    def _dense(self, h: Array, name: str) -> Array:
        out: Array = h @ self._w[f"{name}.weight"]
        out += self._w[f"{name}.bias"]
        return out

    def _layer(self, x: Array, bias: Array, p: str) -> Array:
        """One encoder layer on ``x`` (tokens of all texts, flat: batch * width rows)."""
        batch, width = bias.shape
        heads, head = self._heads, self.dim // self._heads
        qkv = self._dense(x, f"{p}qkv").reshape(batch, width, 3, heads, head)
        context = np.empty((batch, width, heads, head), dtype=np.float32)
        # Attention a few texts at a time, so its (texts, heads, width, width) scores stay in
        # the CPU cache: over a whole batch of long texts they are hundreds of megabytes.
        step = max(1, _SCORES // (heads * width * width))
        for lo in range(0, batch, step):
            hi = min(batch, lo + step)
            q = qkv[lo:hi, :, 0].transpose(0, 2, 1, 3)
            k_t = qkv[lo:hi, :, 1].transpose(0, 2, 3, 1)
            v = qkv[lo:hi, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k_t
            scores += bias[lo:hi, None, None, :]
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            mixed = scores @ v
            mixed /= scores.sum(axis=-1, keepdims=True)  # softmax's division, on width x head, not width^2
            context[lo:hi] = mixed.transpose(0, 2, 1, 3)
        attended = self._dense(context.reshape(-1, self.dim), f"{p}attention.output.dense")
        attended += x
        x = self._norm(attended, f"{p}attention.output.LayerNorm.")
        hidden = _gelu(self._dense(x, f"{p}intermediate.dense"))
        out = self._dense(hidden, f"{p}output.dense")
        out += x
        return self._norm(out, f"{p}output.LayerNorm.")

    def _norm(self, x: Array, prefix: str) -> Array:
        return _layer_norm(x, self._w[prefix + "weight"], self._w[prefix + "bias"], self._eps)

    def embed_documents(self, texts: Sequence[str]) -> Array:
        """Encode texts in batches of similar length; rows come back in input order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        batches = length_batches([len(e.ids) for e in encodings], self.batch_size, _TOKENS)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def encode(batch: list[int]) -> Array:
            return self._encode([encodings[i] for i in batch])

        with self._lock:
            if len(batches) == 1 and self.threads > 1:  # numpy's BLAS setting (embed_query sets it)
                out[batches[0]] = encode(batches[0])
                return out
            # Each batch on one BLAS thread, whole batches side by side: numpy's element-wise
            # steps (a third of the time) run in parallel too, and no BLAS thread spins waiting.
            with self._threads.limit(limits=1, user_api="blas"):
                if self.threads == 1:
                    for batch in batches:
                        out[batch] = encode(batch)
                    return out
                with ThreadPoolExecutor(min(self.threads, len(batches))) as pool:
                    for batch, rows in zip(batches, pool.map(encode, batches), strict=True):
                        out[batch] = rows
        return out

    def embed_query(self, text: str) -> Array:
        """Encode one query (on ``query_threads`` BLAS threads)."""
        if self.query_threads is None:
            row: Array = self.embed_documents([text])[0]
            return row
        with self._threads.limit(limits=self.query_threads, user_api="blas"):
            row = self.embed_documents([text])[0]
        return row
