"""The numpy runtime gives sentence-transformers' vectors for the packaged MiniLM (both runtimes run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, EmbeddingConfig
from dreammem.embed.models import SentenceTransformerEmbedder, resolve_embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder

pytestmark = pytest.mark.integration

TOLERANCE = 1e-5
"""Largest difference allowed in any coordinate of a unit vector (measured: ~3e-7)."""

TEXTS = [
    "I prefer Excel reports over PDF.",
    "Order #48213 ships on 2024-07-15.",
    "ok",
    "",
    "我叫李明，住在北京。",
    "Ünïcödé — emoji 🎉 and punctuation!!!",
    "The quarterly analytics budget must not exceed fifty thousand US dollars. " * 40,  # past 256 tokens
]


@pytest.fixture(scope="module")
def runtimes() -> tuple[NumpyBertEmbedder, SentenceTransformerEmbedder]:
    return NumpyBertEmbedder(), SentenceTransformerEmbedder()


def test_same_name_dimension_and_vectors(
    runtimes: tuple[NumpyBertEmbedder, SentenceTransformerEmbedder],
) -> None:
    numpy_rt, torch_rt = runtimes
    assert (numpy_rt.name, numpy_rt.dim) == (torch_rt.name, torch_rt.dim) == ("all-MiniLM-L6-v2", 384)
    ours, theirs = numpy_rt.embed_documents(TEXTS), torch_rt.embed_documents(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    assert float(np.abs(ours - theirs).max()) < TOLERANCE
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    query = "which report format?"
    assert float(np.abs(numpy_rt.embed_query(query) - torch_rt.embed_query(query)).max()) < TOLERANCE


def test_batches_keep_input_order(runtimes: tuple[NumpyBertEmbedder, SentenceTransformerEmbedder]) -> None:
    numpy_rt, _ = runtimes
    one_by_one = np.stack([numpy_rt.embed_query(t) for t in TEXTS])
    together = numpy_rt.embed_documents(TEXTS)
    assert float(np.abs(one_by_one - together).max()) < TOLERANCE  # padding never leaks into a vector
    assert numpy_rt.embed_documents([]).shape == (0, 384)


def test_runtime_setting_picks_the_runtime() -> None:
    assert isinstance(resolve_embedder("minilm", runtime="numpy"), NumpyBertEmbedder)
    assert isinstance(resolve_embedder("minilm", runtime="torch"), SentenceTransformerEmbedder)
    # This environment has sentence-transformers (the torch extra); auto still takes numpy.
    assert isinstance(resolve_embedder("minilm", runtime="auto"), NumpyBertEmbedder)


def test_a_store_written_on_numpy_opens_and_recalls_on_torch(tmp_path: Path) -> None:
    numpy_config = DreamMemConfig(embedding=EmbeddingConfig(model="minilm", runtime="numpy"))
    with DreamMemory(tmp_path / "store", config=numpy_config) as memory:
        memory.add("I prefer window seats on long flights.", user_id="u")
        memory.add("Order #48213 ships on 2024-07-15.", user_id="u")
        assert isinstance(memory.embedder, NumpyBertEmbedder)
    torch_config = DreamMemConfig(embedding=EmbeddingConfig(model="minilm", runtime="torch"))
    with DreamMemory(tmp_path / "store", config=torch_config) as memory:
        hits = memory.recall("which seat do I like?", user_id="u", k=1, paths=["vector"])
        assert hits[0].record.content == "I prefer window seats on long flights."


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
