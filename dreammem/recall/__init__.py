"""Recall: paths find candidates, fusion merges them, stages reorder, packing renders."""

from dreammem.recall.result import Hit, RecallResult

__all__ = ["Hit", "RecallResult"]
