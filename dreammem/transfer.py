"""Export and import of one user's memory as JSON Lines.

The first line is a header; then one line per record, oldest first, with every
field of :class:`~dreammem.types.MemoryRecord` (history versions and forgotten
records included: they are records with another status, linked by
``superseded_by`` and ``provenance``) and whether it waits for the next dream; then
one line per saved task state::

    {"format": "dreammem-export", "version": 3, "user_id": "alice", "records": 2}
    {"record": {"id": "...", "content": "...", "metadata": {...}, "system": {...}, ...}, "queued": true}
    {"task_state": {"session_id": "s1", "state": {"goal": "..."}}}

Pure functions: the facade reads and writes the store. Parsing validates every line
before anything is written, so a bad file changes nothing.

Version 2 carries the library's notes on each record in ``system``, apart from the
caller's ``metadata`` (:mod:`dreammem.system_meta`). A record's ``system`` must hold only
the keys of :class:`~dreammem.system_meta.SystemMeta`, each of its type. A version 1
export (written before the move) kept them in ``metadata``: reading one moves them out
as opening an older store does (:func:`~dreammem.system_meta.split_legacy`). Version 3
also carries an adapter message's key and a keyed entry in ``system``; a version 2 export
kept them in ``metadata``, whence reading one moves them (:func:`~dreammem.system_meta.split_later`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from dreammem.errors import ValidationError
from dreammem.system_meta import NOTES_VERSION, check_system, moved_out
from dreammem.types import MemoryRecord
from dreammem.validation import check_content, check_event_time, check_metadata, check_speaker, require_id

__all__ = [
    "FORMAT",
    "READS",
    "VERSION",
    "ExportedRecord",
    "ParsedExport",
    "export_lines",
    "parse_export",
    "split_lines",
]

FORMAT = "dreammem-export"
VERSION = NOTES_VERSION
"""The version :func:`export_lines` writes (3: every library note in ``system``)."""
READS = (1, 2, 3)
"""The versions :func:`parse_export` reads (1: the notes inside ``metadata``; 2: message keys and
keyed entries inside ``metadata``)."""


@dataclass(frozen=True, slots=True)
class ExportedRecord:
    """One record line: the record and whether it was queued for the next dream."""

    record: MemoryRecord
    queued: bool = False


@dataclass(frozen=True, slots=True)
class ParsedExport:
    """A validated export, re-scoped to the importing user."""

    records: tuple[ExportedRecord, ...]
    task_states: tuple[tuple[str, dict[str, Any]], ...] = ()


def export_lines(
    user_id: str,
    records: Sequence[ExportedRecord],
    task_states: Iterable[tuple[str, Mapping[str, Any]]] = (),
) -> Iterator[str]:
    """The lines of an export (without newlines), header first."""
    yield _dumps({"format": FORMAT, "version": VERSION, "user_id": user_id, "records": len(records)})
    for item in records:
        yield _dumps({"record": item.record.to_dict(), "queued": item.queued})
    for session_id, state in task_states:
        yield _dumps({"task_state": {"session_id": session_id, "state": dict(state)}})


def parse_export(lines: Iterable[str], *, user_id: str, max_chars: int) -> ParsedExport:
    """Read and validate an export; every record is re-scoped to ``user_id``.

    Args:
        lines: The file's lines, split at line feeds only (:func:`split_lines`); blank
            lines are skipped.
        user_id: The importing user: the records become theirs.
        max_chars: The content limit of the importing store.

    Raises:
        ValidationError: no header, another format or version, a line that is not
            JSON or not a record, a bad field, a duplicate id, or more records than
            the header announced; the message names the line.
    """
    limit = max_chars * 8 + 65_536  # a line holds one record: content plus bounded fields
    records: list[ExportedRecord] = []
    states: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    header: dict[str, Any] | None = None
    for number, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise ValidationError(f"line {number}: expected text, got {type(line).__name__}")
        if not line.strip():
            continue
        if len(line) > limit:
            raise ValidationError(f"line {number}: {len(line):,} characters; the limit is {limit:,}")
        data = _loads(line, number)
        if header is None:
            header = _header(data, number)
            continue
        if "record" in data:
            item = _record(data, number, user_id, max_chars, written=header["version"])
            if item.record.id in seen:
                raise ValidationError(f"line {number}: record id {item.record.id} appears twice")
            seen.add(item.record.id)
            records.append(item)
        elif "task_state" in data:
            states.append(_task_state(data["task_state"], number))
        else:
            raise ValidationError(f"line {number}: neither a record nor a task state")
    if header is None:
        raise ValidationError(f"not a DreamMem export: no {FORMAT!r} header line")
    if len(records) != header["records"]:
        raise ValidationError(
            f"the header announces {header['records']} records, the file holds {len(records)}"
        )
    return ParsedExport(tuple(records), tuple(states))


_LINE_BREAKS = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})
"""Line breaks ``json.dumps`` keeps raw (it escapes those below U+0020), escaped for other readers."""


def _dumps(data: Mapping[str, Any]) -> str:
    # Outside strings JSON holds no such characters, so escaping them keeps the same value.
    return json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False).translate(_LINE_BREAKS)


def split_lines(text: str) -> list[str]:
    """An export's lines: split at line feeds only (``str.splitlines`` also breaks at U+2028 and more)."""
    return text.split("\n")


def _loads(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line, strict=False)  # a raw control character inside a string is its text
    except (ValueError, RecursionError) as exc:
        raise ValidationError(f"line {number}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValidationError(f"line {number}: expected a JSON object, got {type(data).__name__}")
    return data


def _header(data: Mapping[str, Any], number: int) -> dict[str, Any]:
    if data.get("format") != FORMAT:
        raise ValidationError(f"line {number}: not a DreamMem export (no {FORMAT!r} header)")
    version = data.get("version")
    if isinstance(version, bool) or version not in READS:
        raise ValidationError(f"line {number}: export version {version!r}; this DreamMem reads {list(READS)}")
    count = data.get("records")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValidationError(f"line {number}: the header's record count must be an int >= 0")
    return dict(data)


def _record(
    data: Mapping[str, Any], number: int, user_id: str, max_chars: int, *, written: int
) -> ExportedRecord:
    fields, queued = data["record"], data.get("queued", False)
    if not isinstance(fields, dict) or not isinstance(queued, bool):
        raise ValidationError(f"line {number}: a record line holds an object and a bool 'queued'")
    if missing := sorted(_REQUIRED - set(fields)):
        raise ValidationError(f"line {number}: a record lacks {missing}")
    if not all(isinstance(fields.get(name, []), list) for name in ("provenance", "entities")):
        raise ValidationError(f"line {number}: provenance and entities must be lists")
    fields = moved_out(fields, written)  # an older version's notes out of the metadata
    try:
        record = MemoryRecord.from_dict({**fields, "user_id": user_id})
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise ValidationError(f"line {number}: bad record ({type(exc).__name__}: {exc})") from exc
    _check_types(record, number)
    try:
        record = replace(
            record,
            id=require_id(record.id, "id"),
            content=check_content(record.content, max_chars=max_chars),
            speaker=check_speaker(record.speaker),
            metadata=check_metadata(record.metadata, max_chars=max_chars),
            system=check_system(fields.get("system", {})),
            created_at=_utc(record.created_at),
            event_time=_utc(record.event_time),
            last_accessed_at=None if record.last_accessed_at is None else _utc(record.last_accessed_at),
            valid_to=None if record.valid_to is None else _utc(record.valid_to),
        )
    except ValidationError as exc:
        raise ValidationError(f"line {number}: {exc}") from exc
    return ExportedRecord(record, queued)


_REQUIRED = frozenset(
    {"id", "content", "layer", "kind", "source", "confidence", "importance", "priority", "pinned"}
    | {"created_at", "event_time", "status"}
)


def _check_types(record: MemoryRecord, number: int) -> None:
    """Fields the codec passes through as they are must have the types a record promises."""
    strings = [record.id, record.content, *record.provenance, *record.entities]
    optional = [record.agent_id, record.session_id, record.superseded_by, record.slot]
    if not all(isinstance(s, str) for s in strings) or not all(
        s is None or isinstance(s, str) for s in optional
    ):
        raise ValidationError(f"line {number}: ids, content, provenance, entities and slot must be strings")
    if not 0.0 <= record.confidence <= 1.0 or not 1 <= record.importance <= 5 or record.access_count < 0:
        raise ValidationError(f"line {number}: confidence, importance or access_count out of range")


def _utc(value: datetime) -> datetime:
    return check_event_time(value, default=value)


def _task_state(data: object, number: int) -> tuple[str, dict[str, Any]]:
    if not isinstance(data, dict):
        raise ValidationError(f"line {number}: a task state is an object")
    try:
        return require_id(data.get("session_id"), "session_id"), check_metadata(data.get("state"))
    except ValidationError as exc:
        raise ValidationError(f"line {number}: {exc}") from exc
