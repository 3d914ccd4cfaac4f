"""Checks on every value that crosses the public API.

Bad input raises a typed error before anything is written, so the store is never
left half-updated. Documented normalisations:

* content: Unicode NFC; surrounding whitespace stripped; NUL bytes rejected.
* datetimes: a naive datetime is taken as UTC; aware ones are converted to UTC.
* metadata and task state: a JSON copy; NaN, infinities, lone surrogates and
  nesting too deep to encode are rejected (SQLite's JSON functions read them back).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from dreammem.errors import ScopeError, ValidationError
from dreammem.types import Layer, Role, Status

__all__ = [
    "MAX_OFFSET",
    "check_content",
    "check_event_time",
    "check_filters",
    "check_id",
    "check_k",
    "check_metadata",
    "check_names",
    "check_offset",
    "check_page_limit",
    "check_role",
    "check_slot",
    "check_speaker",
    "check_user_id",
    "require_id",
]

_MAX_ID_LEN = 256
MAX_SPEAKER_CHARS = 100
"""The longest speaker name (a person's or an agent's name, not a sentence)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a str, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{what} contains invalid Unicode (lone surrogate)") from exc
    if "\x00" in value:
        raise ValidationError(f"{what} contains a NUL byte")
    return value


def check_user_id(user_id: object, what: str = "user_id") -> str:
    """Return a valid scope id or raise :class:`ScopeError`.

    Scope ids are non-empty strings of at most 256 characters without control
    characters; they are used as given (no case folding).
    """
    if user_id is None:
        raise ScopeError(f"{what} is required")
    if not isinstance(user_id, str):
        raise ScopeError(f"{what} must be a str, got {type(user_id).__name__}")
    if not user_id.strip():
        raise ScopeError(f"{what} must not be empty")
    try:
        user_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ScopeError(f"{what} contains invalid Unicode") from exc
    if len(user_id) > _MAX_ID_LEN or _CONTROL.search(user_id) or "\x00" in user_id:
        raise ScopeError(f"{what} is too long or contains control characters")
    return user_id


def check_id(value: object, what: str) -> str | None:
    """Validate an optional secondary id (session, agent); None passes through."""
    if value is None:
        return None
    text = _check_text(value, what)
    if not text.strip() or len(text) > _MAX_ID_LEN or _CONTROL.search(text):
        raise ValidationError(f"{what} must be 1-{_MAX_ID_LEN} printable characters")
    return text


def require_id(value: object, what: str) -> str:
    """Validate a mandatory id (a memory, dream or session id) or raise :class:`ValidationError`."""
    text = check_id(value, what)
    if text is None:
        raise ValidationError(f"{what} is required")
    return text


def check_names(values: object, what: str) -> list[str]:
    """Return a list of names from a sequence of str (a bare str is not a list of names)."""
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise ValidationError(f"{what} must be a list of names, got {type(values).__name__}")
    names = list(values)
    if not all(isinstance(name, str) for name in names):
        raise ValidationError(f"{what} must contain only str names, got {names!r}")
    return names


def check_slot(slot: object) -> str | None:
    """Validate an optional memory slot name (a non-empty str of valid Unicode without NUL)."""
    if slot is None:
        return None
    text = _check_text(slot, "slot")
    if not text.strip():
        raise ValidationError("slot must not be empty")
    return text


def check_speaker(speaker: object) -> str | None:
    """Return the speaker's name (NFC, trimmed; None passes through) or raise :class:`ValidationError`.

    A name is 1 to :data:`MAX_SPEAKER_CHARS` printable characters.
    """
    if speaker is None:
        return None
    text = unicodedata.normalize("NFC", _check_text(speaker, "speaker")).strip()
    if not text or len(text) > MAX_SPEAKER_CHARS or _CONTROL.search(text):
        raise ValidationError(f"speaker must be 1-{MAX_SPEAKER_CHARS} printable characters")
    return text


def check_content(content: object, *, max_chars: int, what: str = "content") -> str:
    """Return normalised content (or a query) or raise :class:`ValidationError`."""
    text = _check_text(content, what)
    text = unicodedata.normalize("NFC", text).strip()
    if not text:
        raise ValidationError(f"{what} must not be empty or whitespace")
    if len(text) > max_chars:
        raise ValidationError(f"{what} has {len(text)} characters; the limit is {max_chars}")
    return text


def check_role(role: object) -> Role:
    """Return the :class:`Role` or raise :class:`ValidationError`."""
    if isinstance(role, Role):
        return role
    if isinstance(role, str):
        try:
            return Role(role.lower())
        except ValueError:
            pass
    allowed = ", ".join(r.value for r in Role)
    raise ValidationError(f"role must be one of {allowed}; got {role!r}")


_EARLIEST = datetime(2, 1, 1, tzinfo=UTC)
_LATEST = datetime(9998, 12, 31, tzinfo=UTC)


def check_event_time(value: object, *, default: datetime) -> datetime:
    """Return an aware UTC datetime (naive input is taken as UTC).

    Times from year 2 to 9998 are accepted: a day or a year of arithmetic around
    them (windows, reports, decay) must not overflow Python's date range.
    """
    if value is None:
        return default
    if not isinstance(value, datetime):
        raise ValidationError(f"event_time must be a datetime, got {type(value).__name__}")
    try:
        if value.tzinfo is None or value.utcoffset() is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
    except OverflowError as exc:
        raise ValidationError(f"{value!r} is outside the supported date range") from exc
    except ValueError as exc:  # a tzinfo whose offset is 24 hours or more
        raise ValidationError(f"event_time has a bad timezone offset: {exc}") from exc
    if not _EARLIEST <= value <= _LATEST:
        raise ValidationError(f"{value.isoformat()} is outside the years 2 to 9998")
    return value


def check_metadata(
    metadata: object, *, max_chars: int | None = None, what: str = "metadata"
) -> dict[str, Any]:
    """Return a JSON-serialisable copy of the metadata or raise.

    With ``max_chars`` (the store's content limit) its JSON may be no longer than that:
    what is written must fit an export line that the import reads back.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(f"{what} must be a mapping, got {type(metadata).__name__}")
    try:
        encoded = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")  # lone surrogates cannot be stored
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise ValidationError(f"{what} must be JSON-serialisable: {exc}") from exc
    if max_chars is not None and len(encoded) > max_chars:
        limit = f"the limit is {max_chars:,} (write.max_content_chars)"
        raise ValidationError(f"{what} is {len(encoded):,} characters as JSON; {limit}")
    copied: dict[str, Any] = json.loads(encoded)
    return copied


def check_k(k: object) -> int:
    """Return a valid result count (1..1000) or raise."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        raise ValidationError(f"k must be an int from 1 to 1000, got {k!r}")
    return k


def check_filters(layer: str | None, status: str | None) -> tuple[list[Layer] | None, list[Status] | None]:
    """A layer and a status filter (``None``, ``""`` or, for the status, ``"all"``: any) as filter lists."""
    try:
        layers = [Layer(layer)] if layer else None
        statuses = [Status(status)] if status and status != "all" else None
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    return layers, statuses


MAX_PAGE = 10_000
"""The most records one page of ``get_all`` returns (page on with ``offset``)."""


def check_page_limit(limit: object) -> int:
    """Return a valid page size (1..10,000) or raise."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ValidationError(
            f"limit must be an int from 1 to {MAX_PAGE:,} (page on with offset), got {limit!r}"
        )
    return limit


MAX_OFFSET = 2**53
"""The largest page offset: far past any store, and within what SQLite and Neo4j count in."""


def check_offset(offset: object) -> int:
    """Return a valid page offset (an int from 0 to :data:`MAX_OFFSET`) or raise."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise ValidationError(f"offset must be an int from 0 to {MAX_OFFSET:,}, got {offset!r}")
    return offset
