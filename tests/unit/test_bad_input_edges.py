"""Bad input at the edges the broad tests miss: export lines, slots, roles, times, filter values.

Each case names the field it breaks, checks the typed error and its message, and
that nothing was written.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from dreammem import DreamMemory, Role, ValidationError
from dreammem.recall.filters import RecallFilter
from dreammem.validation import check_event_time, check_role, check_slot

HEADER = {"format": "dreammem-export", "version": 1, "records": 1}


def _export(memory: DreamMemory) -> tuple[str, dict[str, Any]]:
    memory.add("a line to copy", user_id="src")
    header, line = memory.export(user_id="src").splitlines()[:2]
    return header, json.loads(line)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"queued": "yes"}, "a bool 'queued'"),
        ({"record": ["not", "an", "object"]}, "a bool 'queued'"),
        ({"record": {"id": "x"}}, "a record lacks"),
        ({"record": {"entities": "Oslo"}}, "provenance and entities must be lists"),
        ({"record": {"slot": 7}}, "must be strings"),
        ({"record": {"agent_id": ["a"]}}, "must be strings"),
        ({"record": {"access_count": -1}}, "out of range"),
        ({"record": {"importance": 0}}, "out of range"),
    ],
)
def test_a_bad_record_line_names_its_line_and_writes_nothing(
    memory: DreamMemory, change: dict[str, Any], message: str
) -> None:
    header, line = _export(memory)
    if isinstance(change.get("record"), dict) and set(change["record"]) != {"id"}:
        broken = {**line, "record": {**line["record"], **change["record"]}}
    else:
        broken = {**line, **change}
    with pytest.raises(ValidationError, match=message) as info:
        memory.import_([header, json.dumps(broken)], user_id="dst")
    assert str(info.value).startswith("line 2")
    assert memory.get_all(user_id="dst", status=None) == []


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("not an object", "a task state is an object"),
        ({"session_id": "", "state": {}}, "session_id"),
        ({"session_id": "s1", "state": {"x": float("nan")}}, "JSON"),
    ],
)
def test_a_bad_task_state_line_is_refused(memory: DreamMemory, state: object, message: str) -> None:
    header = json.dumps({**HEADER, "records": 0})
    line = json.dumps({"task_state": state}) if not isinstance(state, dict) else _task_line(state)
    with pytest.raises(ValidationError, match=message) as info:
        memory.import_([header, line], user_id="dst")
    assert str(info.value).startswith("line 2")
    assert memory.task_state(user_id="dst", session_id="s1") == {}


def _task_line(state: dict[str, Any]) -> str:
    # NaN cannot pass json.dumps(allow_nan=False), but a hand-edited file can hold it
    return json.dumps({"task_state": state}, allow_nan=True)


@pytest.mark.parametrize("count", [-1, "1", True, 1.0, None])
def test_a_header_whose_record_count_is_not_a_count_is_refused(memory: DreamMemory, count: object) -> None:
    with pytest.raises(ValidationError, match="record count must be an int"):
        memory.import_([json.dumps({**HEADER, "records": count})], user_id="dst")


def test_lines_that_are_not_text_are_refused(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError, match="line 1: expected text, got bytes"):
        memory.import_([b'{"format": "dreammem-export"}'], user_id="dst")  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="import data must be text"):
        memory.import_(42, user_id="dst")  # type: ignore[arg-type]


def test_a_line_longer_than_any_record_can_be_is_refused_before_it_is_parsed(memory: DreamMemory) -> None:
    limit = memory.config.write.max_content_chars * 8 + 65_536
    huge = '{"x": "' + "a" * limit + '"}'
    with pytest.raises(ValidationError, match=r"line 2: .* characters; the limit is"):
        memory.import_([json.dumps(HEADER), huge], user_id="dst")


@pytest.mark.parametrize("slot", ["", "   ", "\t\n"])
def test_a_blank_slot_is_refused(memory: DreamMemory, slot: str) -> None:
    with pytest.raises(ValidationError, match="slot must not be empty"):
        check_slot(slot)
    with pytest.raises(ValidationError, match="slot"):
        memory.remember("I live in Oslo", user_id="u1", slot=slot)
    assert memory.get_all(user_id="u1") == []


def test_a_role_may_be_given_in_any_case_or_as_the_enum() -> None:
    assert check_role("ASSISTANT") is Role.ASSISTANT
    assert check_role(Role.TOOL) is Role.TOOL
    for bad in ("robot", 3, None):
        with pytest.raises(ValidationError, match="role must be one of user"):
            check_role(bad)


def test_times_near_the_ends_of_the_calendar() -> None:
    default = datetime(2020, 1, 1, tzinfo=UTC)
    east = timezone(timedelta(hours=14))
    with pytest.raises(ValidationError, match="outside the supported date range"):
        check_event_time(datetime(1, 1, 1, tzinfo=east), default=default)  # UTC would be year 0
    with pytest.raises(ValidationError, match="outside the years 2 to 9998"):
        check_event_time(datetime(9999, 6, 1), default=default)
    with pytest.raises(ValidationError, match="outside the years 2 to 9998"):
        check_event_time(datetime(1, 6, 1), default=default)
    assert check_event_time(datetime(2, 1, 1, 12), default=default) == datetime(2, 1, 1, 12, tzinfo=UTC)
    assert check_event_time(None, default=default) is default


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"layers": []}, "non-empty list of names"),
        ({"kinds": 5}, "non-empty list of names"),
        ({"layers": ["attic"]}, "allowed: "),
        ({"kinds": "turn", "colour": "red"}, "unknown filter fields"),
        ("layers=semantic", "a RecallFilter or a mapping"),
    ],
)
def test_bad_filter_values_are_typed_errors(memory: DreamMemory, filters: object, message: str) -> None:
    memory.add("I live in Oslo", user_id="u1")
    with pytest.raises(ValidationError, match=message):
        memory.recall("where do I live", user_id="u1", filters=filters)  # type: ignore[arg-type]


def test_metadata_filters_compare_json_values_not_python_ones(memory: DreamMemory) -> None:
    values = [True, 1, 1.0, [1, {"a": None}], {"k": [True]}, "1"]
    for n, value in enumerate(values):
        memory.add(f"note {n}", user_id="u1", metadata={"v": value})

    def found(value: object) -> list[str]:
        parsed = RecallFilter.parse({"metadata": {"v": value}})
        assert parsed is not None
        return sorted(r.content for r in memory.get_all(user_id="u1") if parsed.matches(r))

    assert found(True) == ["note 0"]  # true is not 1
    assert found(1) == ["note 1", "note 2"]  # 1 == 1.0 in JSON
    assert found([1, {"a": None}]) == ["note 3"]
    assert found([1, {"a": 0}]) == []
    assert found({"k": [True]}) == ["note 4"]
    assert found({"k": [1]}) == []
    assert found("1") == ["note 5"]
    assert RecallFilter.parse({"metadata": {}}) is None  # an empty filter is no filter
