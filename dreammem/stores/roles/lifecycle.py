"""The record store's lifecycle role: transactions, the schema version, closing, meta values."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Any

__all__ = ["StoreLifecycle"]


class StoreLifecycle(ABC):
    """Units of work and the store's own key/value metadata."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """One atomic unit of work; nested calls join the outer one."""

    @property
    @abstractmethod
    def schema_version(self) -> int:
        """The highest schema migration applied."""

    @abstractmethod
    def close(self) -> None:
        """Release the store (idempotent); later calls raise ``BackendError``."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A value of the store's key/value metadata."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
