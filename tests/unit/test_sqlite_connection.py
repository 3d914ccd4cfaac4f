"""The SQLite connection's edges: bad settings, unopenable files, transactions, locks, closing."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from dreammem.errors import BackendError, ConfigError
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.codec import backend_error, split_sql
from dreammem.types import MemoryRecord


def _meta(store: SQLiteRecordStore, key: str) -> str | None:
    return store.get_meta(key)


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), -0.1])
def test_a_context_weight_that_is_not_a_finite_non_negative_number_is_a_config_error(weight: float) -> None:
    with pytest.raises(ConfigError, match="context_weight"):
        SQLiteRecordStore(":memory:", context_weight=weight)


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(BackendError) as info:
        SQLiteRecordStore(tmp_path)
    assert not info.value.is_retryable
    assert isinstance(info.value.__cause__, sqlite3.Error)


def test_a_new_file_records_every_migration_in_order(tmp_path: Path) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    assert store.schema_version == max(m.version for m in MIGRATIONS)
    applied = store.fetchall("SELECT version, name FROM schema_version ORDER BY version")
    assert [(m.version, m.name) for m in MIGRATIONS] == [tuple(r) for r in applied]
    store.close()


def test_an_up_to_date_file_opens_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SQLiteRecordStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        store = SQLiteRecordStore(path)  # no migration to apply: no write lock wanted
        assert time.monotonic() - started < 5
        assert store.count() == 0
        store.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_locked_new_file_is_retried_until_the_lock_goes(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: holder.execute("ROLLBACK"))
    release.start()
    try:
        store = SQLiteRecordStore(path, context_weight=0.5)
        assert store.schema_version == max(m.version for m in MIGRATIONS)
        store.close()
    finally:
        release.join()
        holder.close()


def test_an_error_inside_a_nested_transaction_rolls_back_the_outer_one_too() -> None:
    store = SQLiteRecordStore(":memory:")
    store.set_meta("kept", "1")

    class Boom(Exception):
        pass

    with pytest.raises(Boom), store.transaction():
        store.set_meta("outer", "1")
        with store.transaction():
            store.set_meta("inner", "1")
            raise Boom
    assert (_meta(store, "outer"), _meta(store, "inner"), _meta(store, "kept")) == (None, None, "1")
    with store.transaction():  # the store is usable again
        store.set_meta("after", "1")
    assert _meta(store, "after") == "1"


def test_a_sqlite_error_inside_a_transaction_is_a_backend_error_with_its_cause() -> None:
    store = SQLiteRecordStore(":memory:")
    record = MemoryRecord(user_id="u", content="only once")
    with pytest.raises(BackendError) as info, store.transaction() as conn:
        store.insert([record], ["only once"])
        conn.execute("INSERT INTO nope VALUES (1)")
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert store.count("u") == 0  # the insert before the error was rolled back


def test_a_closed_store_raises_a_typed_error_on_every_call_and_closes_twice() -> None:
    store = SQLiteRecordStore(":memory:")
    store.close()
    store.close()
    for call in (
        lambda: store.count(),
        lambda: store.get_meta("x"),
        lambda: store.fetchall("SELECT 1"),
        lambda: store.executemany("SELECT ?", [(1,)]),
    ):
        with pytest.raises(BackendError, match="closed"):
            call()
    with pytest.raises(BackendError, match="closed"), store.transaction():
        pass


def test_only_busy_or_locked_errors_are_retryable() -> None:
    assert backend_error(sqlite3.OperationalError("database is locked"), "f").is_retryable
    assert backend_error(sqlite3.OperationalError("database is busy"), "f").is_retryable
    assert not backend_error(sqlite3.OperationalError("no such table: x"), "f").is_retryable
    assert not backend_error(sqlite3.IntegrityError("locked"), "f").is_retryable
    assert "f" in str(backend_error(sqlite3.DatabaseError("disk I/O error"), "f"))


def test_split_sql_keeps_a_trigger_body_whole_and_drops_empty_statements() -> None:
    script = """
    CREATE TABLE a (x);;
    CREATE TRIGGER t AFTER INSERT ON a BEGIN
        INSERT INTO a VALUES (1);
        DELETE FROM a WHERE x = 2;
    END;
    CREATE INDEX i ON a (x)
    """
    statements = split_sql(script)
    assert len(statements) == 3
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")
    assert statements[2].startswith("CREATE INDEX i ON a (x)")
    conn = sqlite3.connect(":memory:")
    for statement in statements:
        conn.execute(statement)
    conn.execute("INSERT INTO a VALUES (5)")
    assert sorted(r[0] for r in conn.execute("SELECT x FROM a")) == [1, 5]
