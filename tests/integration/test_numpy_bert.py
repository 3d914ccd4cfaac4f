"""The numpy runtime gives sentence-transformers' vectors for the packaged MiniLM.

The reference vectors were made once on torch by ``scripts/minilm_reference.py`` and are
stored in tests/fixtures; ``make test-train`` checks they still are what
sentence-transformers gives, and that a store written on numpy opens on torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dreammem.embed.models import resolve_embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder

pytestmark = pytest.mark.integration

TOLERANCE = 1e-5
"""Largest difference allowed in any coordinate of a unit vector (measured: ~3e-7)."""

FIXTURES = Path(__file__).parents[1] / "fixtures"
REFERENCE = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
TEXTS: list[str] = REFERENCE["texts"]
REFERENCE_VECTORS = np.load(FIXTURES / "minilm_reference.npy", allow_pickle=False)
"""sentence-transformers' vectors of ``TEXTS``, then of the reference query."""


@pytest.fixture(scope="module")
def numpy_rt() -> NumpyBertEmbedder:
    return NumpyBertEmbedder()


def test_same_name_dimension_and_vectors_as_the_stored_torch_reference(numpy_rt: NumpyBertEmbedder) -> None:
    assert (numpy_rt.name, numpy_rt.dim) == (REFERENCE["model"], 384) == ("all-MiniLM-L6-v2", 384)
    assert REFERENCE_VECTORS.shape == (len(TEXTS) + 1, 384) and len(TEXTS) == 7
    assert max(map(len, TEXTS)) > 2000  # one text past the model's 256-token cut
    ours = numpy_rt.embed_documents(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    assert float(np.abs(ours - REFERENCE_VECTORS[:-1]).max()) < TOLERANCE
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    query = numpy_rt.embed_query(REFERENCE["query"])
    assert float(np.abs(query - REFERENCE_VECTORS[-1]).max()) < TOLERANCE


def test_batches_keep_input_order(numpy_rt: NumpyBertEmbedder) -> None:
    one_by_one = np.stack([numpy_rt.embed_query(t) for t in TEXTS])
    together = numpy_rt.embed_documents(TEXTS)
    assert float(np.abs(one_by_one - together).max()) < TOLERANCE  # padding never leaks into a vector
    assert numpy_rt.embed_documents([]).shape == (0, 384)


def test_auto_and_numpy_pick_the_numpy_runtime() -> None:
    assert isinstance(resolve_embedder("minilm", runtime="numpy"), NumpyBertEmbedder)
    assert isinstance(resolve_embedder("minilm", runtime="auto"), NumpyBertEmbedder)


def _run(script: str, store: Path) -> list[str]:
    """Run a script in a fresh interpreter (this checkout first on the path); its stdout lines."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(store)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout.splitlines()


@pytest.mark.parametrize("config", ["DreamMemConfig(embedding=EmbeddingConfig(runtime='numpy'))", "None"])
def test_a_numpy_or_default_process_never_imports_torch(tmp_path: Path, config: str) -> None:
    script = (
        "import sys\n"
        "from dreammem import DreamMemory\n"
        "from dreammem.config import DreamMemConfig, EmbeddingConfig\n"
        f"config = {config}\n"
        "with DreamMemory(sys.argv[1], config=config) as memory:\n"
        "    memory.add('I prefer window seats.', user_id='u')\n"
        "    hit = memory.recall('seat?', user_id='u', k=1)[0].record.content\n"
        "    print(type(memory.embedder).__name__, hit)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    assert _run(script, tmp_path / "s") == ["NumpyBertEmbedder I prefer window seats.", "[]"]


def test_the_default_store_works_where_torch_is_not_installed(tmp_path: Path) -> None:
    """The lean install (no torch, transformers or sentence-transformers): write, recall, dream."""
    script = (
        "import importlib.abc, sys\n"
        "class NotInstalled(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'torch', 'transformers', 'sentence_transformers'}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "        return None\n"
        "sys.meta_path.insert(0, NotInstalled())\n"
        "from dreammem import DreamMemory\n"
        "with DreamMemory(sys.argv[1]) as memory:\n"
        "    memory.add_many([{'content': t, 'user_id': 'u', 'session_id': 's1'} for t in (\n"
        "        'I prefer window seats on long flights.', 'Our budget must not exceed 2,000 USD.')])\n"
        "    print(memory.recall('which seat do I like?', user_id='u', k=1)[0].record.content)\n"
        "    print(memory.dream(user_id='u').counts['queued'])\n"
    )
    assert _run(script, tmp_path / "s") == ["I prefer window seats on long flights.", "2"]
