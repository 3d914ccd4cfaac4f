"""Embedders: text to unit-length float32 vectors, behind one small protocol."""

from dreammem.embed.base import Embedder, HashingEmbedder
from dreammem.embed.models import E5Embedder, SentenceTransformerEmbedder, resolve_embedder

__all__ = [
    "E5Embedder",
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "resolve_embedder",
]
