"""The tests that need torch (``make test-train``): training, the reranker, the torch runtime.

``make test`` installs no torch and does not collect this folder; ``make test-train``
runs it in a venv with every extra (``.venv-train``, ``pip install -e ".[all]"``).
"""

from __future__ import annotations

import pytest

from dreammem.embed import SentenceTransformerEmbedder


@pytest.fixture(scope="session")
def torch_minilm() -> SentenceTransformerEmbedder:
    """The packaged all-MiniLM-L6-v2 through sentence-transformers (torch)."""
    return SentenceTransformerEmbedder()
