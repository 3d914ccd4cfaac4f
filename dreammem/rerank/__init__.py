"""Rerankers: cross-encoders that reorder fused recall candidates, and their training."""

from dreammem.rerank.cross_encoder import CrossEncoderReranker

__all__ = ["CrossEncoderReranker"]
