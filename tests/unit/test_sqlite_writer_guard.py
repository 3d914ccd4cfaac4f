"""An embedded store refuses writes from a DreamMem older than the file allows; reads still work."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.errors import StoreVersionError
from dreammem.stores.sqlite.writers import CLIENT_VERSION, MIN_WRITER_VERSION


def _min_writer(folder: Path) -> int:
    with sqlite3.connect(folder / "dreammem.db") as conn:
        row = conn.execute("SELECT value FROM store_meta WHERE key = 'min_writer_version'").fetchone()
    return int(row[0])


def _set_min_writer(folder: Path, version: int) -> None:
    with sqlite3.connect(folder / "dreammem.db") as conn:
        conn.execute("UPDATE store_meta SET value = ? WHERE key = 'min_writer_version'", (str(version),))


def test_a_new_store_records_this_client_as_the_lowest_writer(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        memory.add("I prefer tea.", user_id="u")
    assert _min_writer(tmp_path) == MIN_WRITER_VERSION


def test_opening_never_lowers_the_recorded_version(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()):
        pass
    _set_min_writer(tmp_path, CLIENT_VERSION)
    with DreamMemory(tmp_path, embedder=HashingEmbedder()):
        pass
    assert _min_writer(tmp_path) == CLIENT_VERSION


def test_a_store_a_newer_dreammem_raised_refuses_writes_and_keeps_reads(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        memory.add("My manager is Priya.", user_id="u")
        before = [r.content for r in memory.get_all(user_id="u")]
    _set_min_writer(tmp_path, CLIENT_VERSION + 1)  # what a newer DreamMem would record
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        with pytest.raises(StoreVersionError, match="upgrade DreamMem"):
            memory.add("My manager is Daniel.", user_id="u")
        hits = memory.recall("Who is my manager?", user_id="u")
        assert hits and {h.record.content for h in hits} == {"My manager is Priya."}
        assert [r.content for r in memory.get_all(user_id="u")] == before


def test_a_process_already_open_is_refused_once_a_newer_one_raises_the_bar(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        memory.add("I live in Lisbon.", user_id="u")
        before = [r.content for r in memory.get_all(user_id="u")]
        _set_min_writer(tmp_path, CLIENT_VERSION + 1)
        with pytest.raises(StoreVersionError):
            memory.add("I moved to Porto.", user_id="u")
        assert [r.content for r in memory.get_all(user_id="u")] == before


def test_a_client_older_than_the_guard_cannot_write_records(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        memory.add("I live in Lisbon.", user_id="u")
    # A DreamMem of schema 18 or older opens the file without the guard's SQL function.
    with sqlite3.connect(tmp_path / "dreammem.db") as conn:
        with pytest.raises(sqlite3.OperationalError, match="dreammem_client_version"):
            conn.execute("UPDATE records SET content = 'I moved to Porto.'")
        conn.execute("UPDATE records SET access_count = access_count + 1")  # access counts are not guarded
