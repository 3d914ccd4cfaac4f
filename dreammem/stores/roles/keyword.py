"""The keyword role: BM25 over each record's own terms and context terms, scoped by user."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime

__all__ = ["KeywordIndex"]


class KeywordIndex(ABC):
    """The full-text index of the records (terms come tokenised by :mod:`dreammem.text`)."""

    @abstractmethod
    def keyword_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        max_term_share: float | None = None,
    ) -> list[tuple[int, float]]:
        """BM25 over this user's active records: ``(rowid, score)``, best first."""

    @abstractmethod
    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace one record's keyword terms and context terms."""

    @abstractmethod
    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace one record's own keyword terms, keeping its context terms."""
