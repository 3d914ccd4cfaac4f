"""Keep third-party loaders quiet: no progress bars or log lines on a store open.

transformers draws a "Loading weights" bar for every model load (even when stderr is
not a terminal, so it lands in CI logs and notebooks), and jieba logs four lines the
first time it segments Chinese. Both are silenced here, once, for the library's own
loads; a caller's own settings are restored afterwards.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from types import ModuleType

__all__ = ["quiet_jieba", "quiet_model_load"]

_load_lock = threading.Lock()
_jieba_lock = threading.Lock()


@contextmanager
def quiet_model_load() -> Iterator[None]:
    """Import sentence-transformers and load a model inside this block, without bars or warnings.

    Besides the progress bars, this hides tqdm's "IProgress not found" warning, which
    the first sentence-transformers import prints in a notebook without ipywidgets.
    """
    with _load_lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        from transformers.utils import logging as hf_logging  # noqa: PLC0415 - heavy (transformers): only when a model loads

        was_enabled = hf_logging.is_progress_bar_enabled()
        if was_enabled:
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        try:
            yield
        finally:
            if was_enabled:
                hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


@lru_cache(maxsize=1)
def quiet_jieba() -> ModuleType:
    """The ``jieba`` module, its dictionary loaded with its log lines turned off.

    Every use of jieba (``jieba.cut_for_search``, ``jieba.posseg``) goes through this,
    so whichever comes first loads the dictionary quietly.
    """
    import jieba  # noqa: PLC0415 - jieba loads its dictionary machinery: only for Chinese text

    jieba.setLogLevel(logging.WARNING)
    with _jieba_lock:
        jieba.initialize()
    module: ModuleType = jieba
    return module
