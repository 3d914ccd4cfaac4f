"""Exceptions raised by DreamMem.

Every error raised on purpose by the library derives from :class:`DreamMemError`
and, where one fits, from the matching builtin too, so callers can catch either::

    DreamMemError
    ├── ConfigError(ValueError)          bad configuration or a store/model mismatch
    │   └── StoreVersionError            the store needs a newer DreamMem to write to it
    ├── ValidationError(ValueError)      bad input: empty, too large, wrong type, bad Unicode
    ├── ScopeError(PermissionError)      missing user id, or a record of another user
    ├── NotFoundError(LookupError)       no such record (in this user's scope)
    ├── BackendError(RuntimeError)       a store failed; ``is_retryable`` says if a retry may help
    │   └── GraphUnavailableError        the graph server cannot be reached (retryable)
    └── LLMError(RuntimeError)           the LLM failed or answered something unusable
        └── LLMBudgetError               a dream's LLM call or token budget is spent

A record of another user is reported as :class:`NotFoundError` by ``get``/``forget``/
``history`` so that ids of other users cannot be probed; :class:`ScopeError` is raised
for a missing or malformed user id.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "ConfigError",
    "DreamMemError",
    "GraphUnavailableError",
    "LLMBudgetError",
    "LLMError",
    "NotFoundError",
    "ScopeError",
    "StoreVersionError",
    "ValidationError",
]


class DreamMemError(Exception):
    """Base class of every error DreamMem raises on purpose."""


class ConfigError(DreamMemError, ValueError):
    """The configuration is invalid, or does not match what a store was created with."""


class StoreVersionError(ConfigError):
    """The store needs a newer DreamMem to write to it (upgrade; not retryable).

    It records a lowest writer version above this DreamMem's: records written by this
    version would lack what the newer versions sharing the store read.
    """


class ValidationError(DreamMemError, ValueError):
    """An argument is invalid: empty, too large, of the wrong type or badly encoded."""


class ScopeError(DreamMemError, PermissionError):
    """The user id is missing or malformed, or an operation crosses user scopes."""


class NotFoundError(DreamMemError, LookupError):
    """No record with that id exists in the caller's scope."""


class BackendError(DreamMemError, RuntimeError):
    """A storage backend failed.

    Attributes:
        is_retryable: True when the same call may succeed later (a server that is
            down, a lock that timed out); False for errors a retry cannot fix.
    """

    def __init__(self, message: str, *, is_retryable: bool = False) -> None:
        super().__init__(message)
        self.is_retryable = is_retryable


class GraphUnavailableError(BackendError):
    """The graph backend cannot be reached right now."""

    def __init__(self, message: str) -> None:
        super().__init__(message, is_retryable=True)


class LLMError(DreamMemError, RuntimeError):
    """The LLM failed, timed out, or returned output that could not be used."""


class LLMBudgetError(LLMError):
    """The LLM budget (calls or tokens) of the current dream is spent; rules take over."""
