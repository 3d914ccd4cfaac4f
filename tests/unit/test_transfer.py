"""export -> import into a fresh store -> export again gives the same lines."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dreammem import DreamMemory, ScopeError, ValidationError
from dreammem.embed import HashingEmbedder


def build(memory: DreamMemory) -> None:
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    memory.add("I prefer Excel reports over PDF", user_id="u1", session_id="s1", event_time=start)
    memory.add(
        "Order #48213 ships on 2024-07-15", user_id="u1", session_id="s1", metadata={"src": "mail", "n": 3}
    )
    memory.add("Actually, my favorite report format is now CSV", user_id="u1", session_id="s2")
    note = memory.remember("Never email the client before 9am", user_id="u1", agent_id="planner")
    memory.update(note.id, "Never email the client before 10am", user_id="u1")
    gone = memory.add("A passing remark", user_id="u1", session_id="s2")
    memory.forget(gone.id, user_id="u1")
    memory.set_task_state({"goal": "ship Q3 report", "steps": ["a", "b"]}, user_id="u1", session_id="s2")
    memory.add("someone else", user_id="u2")


def test_round_trip_is_exact(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "a", embedder=HashingEmbedder()) as source:
        build(source)
        source.dream(user_id="u1")
        source.add("after the dream", user_id="u1", session_id="s3")  # still queued
        text = source.export(user_id="u1")
    lines = text.splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "dreammem-export" and header["records"] == len(lines) - 2
    kinds = {json.loads(line).get("record", {}).get("status") for line in lines[1:]}
    assert {"active", "superseded", "deleted", "archived"} <= kinds  # history and forgotten ones too
    assert any(json.loads(line).get("queued") for line in lines[1:])
    assert "someone else" not in text
    with DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as target:
        result = target.import_(text, user_id="u1")
        assert (result.imported, result.skipped, result.task_states) == (header["records"], 0, 1)
        assert target.export(user_id="u1") == text
        assert target.stats(user_id="u1")["queue"] == 1
        assert target.task_state(user_id="u1", session_id="s2")["goal"] == "ship Q3 report"
        again = target.import_(text, user_id="u1")  # idempotent: nothing new
        assert (again.imported, again.skipped) == (0, header["records"])
        assert target.export(user_id="u1") == text
    with (
        DreamMemory(tmp_path / "a", embedder=HashingEmbedder()) as source,
        DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as target,
    ):
        for query in ("report format", "order ships", "email the client"):
            assert [h.id for h in target.recall(query, user_id="u1")] == [
                h.id for h in source.recall(query, user_id="u1")
            ]


def test_import_from_a_file_as_another_user(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "a", embedder=HashingEmbedder()) as source:
        build(source)
        path = tmp_path / "u1.jsonl"
        path.write_text(source.export(user_id="u1"), encoding="utf-8")
        with pytest.raises(ValidationError, match="used by other records"):
            source.import_(path, user_id="copy")  # ids are unique in a store: no silent clash
        assert source.get_all(user_id="copy") == []
    with DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as target:
        with path.open(encoding="utf-8") as handle:
            target.import_(handle, user_id="alice")
        assert {r.user_id for r in target.get_all(user_id="alice", status=None)} == {"alice"}
        assert target.get_all(user_id="u1") == []
        assert target.recall("CSV format", user_id="alice").hits


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no 'dreammem-export' header"),
        ('{"format": "other"}\n', "not a DreamMem export"),
        ('{"format": "dreammem-export", "version": 9, "records": 0}\n', "version"),
        (
            '{"format": "dreammem-export", "version": 1, "records": 1}\n[1]\n',
            "line 2: expected a JSON object",
        ),
        ('{"format": "dreammem-export", "version": 1, "records": 1}\nnot json\n', "line 2: not JSON"),
        ('{"format": "dreammem-export", "version": 1, "records": 1}\n{"record": {"id": "x"}}\n', "line 2"),
        ('{"format": "dreammem-export", "version": 1, "records": 2}\n', "announces 2 records"),
        ('{"format": "dreammem-export", "version": 1, "records": 0}\n{"what": 1}\n', "neither"),
    ],
)
def test_bad_files_are_rejected_whole(memory: DreamMemory, text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        memory.import_(text, user_id="u1")
    assert memory.stats(user_id="u1")["records"]["active"] == 0


def test_bad_records_name_their_line_and_write_nothing(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "a", embedder=HashingEmbedder()) as source:
        source.add("fine", user_id="u1")
        source.add("also fine", user_id="u1")
        lines = source.export(user_id="u1").splitlines()
    record = json.loads(lines[2])
    for field, value in [
        ("layer", "attic"),
        ("confidence", 7.0),
        ("content", " "),
        ("created_at", "yesterday"),
        ("metadata", "not a mapping"),
        ("content", "x" * 1_000_001),
        ("provenance", "abc"),
        ("importance", 9),
    ]:
        broken = json.dumps({**record, "record": {**record["record"], field: value}})
        with DreamMemory(tmp_path / f"b-{field}", embedder=HashingEmbedder()) as target:
            with pytest.raises(ValidationError, match="line 3"):
                target.import_("\n".join([lines[0], lines[1], broken]), user_id="u1")
            assert target.get_all(user_id="u1", status=None) == []
    with DreamMemory(tmp_path / "c", embedder=HashingEmbedder()) as target:
        with pytest.raises(ValidationError, match="appears twice"):
            target.import_(
                "\n".join([lines[0].replace('"records": 2', '"records": 3'), *lines[1:], lines[2]]),
                user_id="u1",
            )
        with pytest.raises(ScopeError):
            target.import_("\n".join(lines), user_id="")
        with pytest.raises(ValidationError, match="must be text"):
            target.import_(b"bytes", user_id="u1")  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="cannot read"):
            target.import_(tmp_path / "missing.jsonl", user_id="u1")
