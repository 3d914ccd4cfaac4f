"""Embedders: text to unit-length float32 vectors, behind one small protocol."""

from dreammem.embed.base import Embedder, HashingEmbedder
from dreammem.embed.models import E5Embedder, SentenceTransformerEmbedder, resolve_embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder

__all__ = [
    "E5Embedder",
    "Embedder",
    "HashingEmbedder",
    "NumpyBertEmbedder",
    "SentenceTransformerEmbedder",
    "resolve_embedder",
]
