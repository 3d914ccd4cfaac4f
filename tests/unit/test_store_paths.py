"""Where an embedded store keeps its files, and which paths name a Neo4j server instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.engine import is_server_uri, resolve_paths, store_files


@pytest.mark.parametrize("suffix", [".db", ".sqlite", ".sqlite3"])
def test_a_database_file_keeps_its_faiss_file_beside_it(tmp_path: Path, suffix: str) -> None:
    database = tmp_path / f"notes{suffix}"
    assert store_files(database) == (database, tmp_path / "notes.faiss")
    with DreamMemory(database, embedder=HashingEmbedder()) as memory:
        memory.add("kept in one file", user_id="u1")
    files = {p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))}
    assert files == {"notes.faiss", f"notes{suffix}"}


def test_a_directory_holds_both_files_and_is_made_when_missing(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    assert store_files(folder) == (folder / "dreammem.db", folder / "vectors.faiss")
    assert not folder.exists()  # naming the files creates nothing
    database, vectors = resolve_paths(folder)
    assert (database, vectors) == (str(folder / "dreammem.db"), folder / "vectors.faiss")
    assert folder.is_dir() and not (folder / "dreammem.db").exists()


def test_no_path_is_an_in_memory_store_with_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_paths(None) == (":memory:", None)
    monkeypatch.chdir(tmp_path)
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add("gone when closed", user_id="u1")
        assert memory.recall("closed", user_id="u1").ids
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("path", "server"),
    [
        ("bolt://127.0.0.1:7687", True),
        ("neo4j+s://db.example.com", True),
        ("BOLT+SSC://host:7687", True),
        ("neo4j://cluster.internal", True),
        ("http://127.0.0.1:7474", False),
        ("./bolt://not-a-uri", False),
        ("store.db", False),
        (Path("bolt:/x"), False),  # a Path is always a local path
        (None, False),
    ],
)
def test_which_paths_name_a_server(path: str | Path | None, server: bool) -> None:
    assert is_server_uri(path) is server
