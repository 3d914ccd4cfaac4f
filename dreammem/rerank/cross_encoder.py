"""Cross-encoder rerankers on the CPU (sentence-transformers ``CrossEncoder``).

:class:`CrossEncoderReranker` loads any cross-encoder by hub name or local path
(for example the one ``dreammem train-reranker`` builds offline, or
``cross-encoder/ms-marco-MiniLM-L-6-v2`` for users with internet) and scores
(query, memory) pairs. Latency levers are constructor options: a shorter
``max_length`` and torch dynamic int8 quantisation of the linear layers.

How the reranker's order is combined with the first-stage order is the recall
pipeline's business (``RecallConfig.rerank_blend``).
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dreammem.embed.models import TORCH_HINT
from dreammem.errors import ConfigError
from dreammem.quiet import quiet_model_load
from dreammem.torch_threads import torch_threads

__all__ = ["CrossEncoderReranker"]

log = logging.getLogger(__name__)


METADATA_FILE = "dreammem_reranker.json"
"""Written beside a model by ``dreammem train-reranker``: how it was trained."""


def _trained_max_length(model: str | Path, default: int = 128) -> int:
    """The max_length a ``dreammem train-reranker`` model was trained with, if it is one."""
    meta = Path(model) / METADATA_FILE
    try:
        return int(json.loads(meta.read_text())["config"]["max_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return default


class CrossEncoderReranker:
    """Scores (query, text) pairs with a sentence-transformers ``CrossEncoder``.

    Args:
        model_name_or_path: A hub name or a local folder.
        max_length: Tokens per pair (longer pairs are truncated); default: what a model
            trained by ``dreammem train-reranker`` was trained with, else 128.
        batch_size: Pairs per forward pass.
        quantize: Apply torch dynamic int8 quantisation to the linear layers.
        threads: torch intra-op threads while scoring; ``None`` (default) keeps torch's
            setting (one per core). On an idle 2-core machine two threads halve the
            rerank of 30 pairs (p95 ~170 -> ~80 ms, 3 layers); on cores shared with
            other busy work they spin and take ~4x longer, so pass 1 there
            (docs/BENCHMARKS.md, recall latency).

    Raises:
        ConfigError: the model cannot be loaded.
    """

    def __init__(
        self,
        model_name_or_path: str | Path,
        *,
        max_length: int | None = None,
        batch_size: int = 32,
        quantize: bool = False,
        threads: int | None = None,
    ) -> None:
        max_length = max_length if max_length is not None else _trained_max_length(model_name_or_path)
        if max_length < 8:
            raise ConfigError("max_length must be at least 8")
        if batch_size < 1:
            raise ConfigError("batch_size must be at least 1")
        if threads is not None and threads < 1:
            raise ConfigError("threads must be at least 1 (or None for torch's setting)")
        self.name = str(model_name_or_path)
        self.max_length = max_length
        self.batch_size = batch_size
        self.quantized = quantize
        self.threads = threads
        self._lock = threading.Lock()
        try:
            with quiet_model_load():  # imports transformers: inside the try, which may be missing too
                from sentence_transformers import CrossEncoder  # noqa: PLC0415 - heavy (torch, transformers): loaded with the model

                self._model: Any = CrossEncoder(self.name, device="cpu", max_length=max_length)
        except ImportError as exc:
            raise ConfigError(f"the cross-encoder runs on torch: {TORCH_HINT}") from exc
        except (OSError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"cannot load cross-encoder {self.name!r}: {exc}") from exc
        self._model.model.eval()
        if quantize:
            self._quantize()

    def _quantize(self) -> None:
        import torch  # noqa: PLC0415 - heavy: only with a loaded model

        inner = self._model.model
        try:
            quantize_dynamic: Any = torch.ao.quantization.quantize_dynamic
        except AttributeError as exc:
            raise ConfigError("this torch has no dynamic quantisation; use quantize=False") from exc
        with warnings.catch_warnings():
            # torch marks eager-mode quantisation deprecated in favour of torchao; it still works.
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", UserWarning)
            quantized = quantize_dynamic(inner, {torch.nn.Linear}, dtype=torch.qint8)
        self._set_inner(quantized)
        log.debug("cross-encoder %s quantised to int8", self.name)

    def _set_inner(self, module: Any) -> None:
        # The wrapped transformers model lives on the first module of the CrossEncoder.
        holder = self._model[0] if hasattr(self._model, "__getitem__") else self._model
        for attribute in ("model", "auto_model"):
            if hasattr(holder, attribute):
                setattr(holder, attribute, module)
                return
        raise ConfigError("cannot quantise this cross-encoder: unknown model layout")

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text (raw logits: higher is more relevant)."""
        if not texts:
            return []
        import torch  # noqa: PLC0415 - heavy: only with a loaded model

        pairs = [(query, text) for text in texts]
        with self._lock, torch_threads(self.threads), torch.inference_mode():
            out = self._model.predict(
                pairs, batch_size=self.batch_size, show_progress_bar=False, activation_fn=torch.nn.Identity()
            )
        return [float(x) for x in out]
