"""The keyword index's scope column: a user's search matches only that user's rows.

A user holding a small share of a store is searched with its scope token ANDed to the
query (FTS5 intersects posting lists instead of ranking every user's matches). The
results must be the ones ranking every match of the store would give: same rows, same
scores, same order, with and without time windows, for the frequent-term window too.
Stores written before the column existed are migrated in place.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import dreammem.engine.unit as unit_module
import dreammem.stores.sqlite.connection as sqlite_module
import dreammem.stores.sqlite.records as records_module
from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores import fts_query
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite import SQLiteRecordStore, keyword
from dreammem.stores.sqlite.codec import COLUMNS, MUTABLE, scope_token
from tests.keyword_alone import ranked_alone

WORDS = "kayak lisbon tea rain garden budget camera flight ticket oolong violin harbour".split()
T0 = datetime(2024, 1, 1, tzinfo=UTC)
USERS = {"big": 60, "Zoë / 42": 15, "small": 6, "tiny@example.com": 3}
"""Users and their share of the rows, in percent of a hundred-row block (interleaved)."""


def _v9_insert(conn: sqlite3.Connection, rows: Sequence[tuple[int, str, str]]) -> None:
    """How schema 9 wrote its keyword rows (no scope column)."""
    conn.executemany("INSERT INTO records_fts (rowid, terms, context) VALUES (?, ?, ?)", rows)


def _turns(seed: int, blocks: int = 4) -> list[dict[str, object]]:
    rng = random.Random(seed)
    owners = [u for u, share in USERS.items() for _ in range(share)]
    turns: list[dict[str, object]] = []
    for n in range(blocks * sum(USERS.values())):
        words = [*rng.choices(WORDS, k=rng.randint(1, 7)), f"w{rng.randint(0, 9999)}"]
        turns.append(
            {
                "content": " ".join(words),
                "user_id": rng.choice(owners),
                "event_time": T0 + timedelta(hours=n),
                "session_id": f"s{n // 5}",
            }
        )
    return turns


@pytest.fixture(scope="module", params=[1, 2])
def memory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DreamMemory]:
    """A store searched, never written, by the tests (so one per module and seed)."""
    config = DreamMemConfig(recall=RecallConfig(context_window_turns=1))
    path = tmp_path_factory.mktemp("scope") / "store"
    with DreamMemory(path, config=config, embedder=HashingEmbedder()) as memory:
        memory.add_many(_turns(request.param))
        yield memory


def _everything(store: SQLiteRecordStore, user: str, terms: list[str]) -> list[tuple[int, float]]:
    """Every active match of the user, ranked by bm25() over the user's rows alone, without any plan."""
    return ranked_alone(store, user, fts_query.match_any(terms))


def _ordered(rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
    return sorted(((r, round(s, 9)) for r, s in rows), key=lambda row: (-row[1], row[0]))


@pytest.mark.parametrize(
    "terms", [["kayak"], ["tea", "rain"], ["budget", "camera", "flight"], ["oolong", "zzz"]]
)
def test_every_users_ranking_is_that_of_all_its_matches(memory: DreamMemory, terms: list[str]) -> None:
    store = memory.store
    for user in USERS:
        want = _everything(store, user, [t for t in terms if t != "zzz"])
        got = store.keyword_search(user, terms, 500)
        assert got and _ordered(got) == _ordered(want)


def test_the_scope_is_used_for_small_users_and_left_out_for_the_one_holding_most(memory: DreamMemory) -> None:
    store = memory.store
    assert store._scope("big") is None  # noqa: SLF001 - white-box: which plan runs
    assert all(store._scope(u) is not None for u in USERS if u != "big")  # noqa: SLF001 - white-box: which plan runs


def _plan(store: SQLiteRecordStore, share: float, **search: object) -> dict[str, list[float]]:
    """Every user's scores with the scope column used up to this share of the rows."""
    keyword.SCOPE_SHARE = share
    store._term_shares.note_writes(10**9)  # noqa: SLF001 - white-box: drop the cached shares
    return {
        user: [round(s, 9) for _, s in store.keyword_search(user, **search)]  # type: ignore[arg-type]
        for user in USERS
    }


@pytest.mark.parametrize("terms", [["tea"], ["tea", "rain"], ["budget", "camera", "flight"]])
@pytest.mark.parametrize("limit", [3, 12, 500])
@pytest.mark.parametrize("share", [None, 0.05])
def test_with_and_without_the_scope_every_plan_gives_the_same_scores(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch, terms: list[str], limit: int, share: float | None
) -> None:
    monkeypatch.setattr(keyword, "SCOPE_SHARE", keyword.SCOPE_SHARE)
    search = {"terms": terms, "limit": limit, "max_term_share": share}
    never = _plan(memory.store, 0.0, **search)
    always = _plan(memory.store, 1.0, **search)
    assert never == always and all(never.values())


def test_time_windows_and_the_frequent_term_window_keep_to_the_user(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = memory.store
    since, until = T0 + timedelta(hours=50), T0 + timedelta(hours=250)
    for user in USERS:
        got = store.keyword_search(user, ["kayak", "tea"], 500, since=since, until=until)
        inside = {r for r, _ in _everything(store, user, ["kayak", "tea"])}
        records = store.get_by_rowids(user, [r for r, _ in got])
        assert {r for r, _ in got} <= inside and len(records) == len(got)
        assert all(since <= rec.event_time < until for rec in records.values())
    monkeypatch.setattr(fts_query, "FREQUENT_WINDOW", 8)
    newest = store.keyword_search("small", ["tea"], 3, max_term_share=0.01)
    mine = sorted(r for r, _ in _everything(store, "small", ["tea"]))
    assert len(newest) == 3 and {r for r, _ in newest} <= set(mine[-8:])


def test_a_query_word_that_is_another_users_scope_finds_none_of_their_rows(memory: DreamMemory) -> None:
    other = scope_token("small")
    assert memory.store.keyword_search("big", [other], 10) == []
    assert memory.store.keyword_search(
        "tiny@example.com", [other, "tea"], 500
    ) == memory.store.keyword_search("tiny@example.com", ["tea"], 500)


def test_a_schema_9_store_is_migrated_and_ranks_like_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = _turns(3, blocks=2)
    config = DreamMemConfig(recall=RecallConfig(context_window_turns=1))
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", MIGRATIONS[:9])
    monkeypatch.setattr(records_module, "insert_fts_rows", _v9_insert)
    monkeypatch.setattr(unit_module, "ground_records", lambda *args: None)  # nor grounded times (14)
    old_columns = [c for c in COLUMNS if c not in ("speaker", "system")]  # nor the speaker (15), system (17)
    marks = ", ".join(f":{c}" for c in old_columns)
    monkeypatch.setattr(
        records_module, "_INSERT", f"INSERT INTO records ({', '.join(old_columns)}) VALUES ({marks})"
    )
    changed = ", ".join(f"{c} = :{c}" for c in MUTABLE if c in old_columns)
    monkeypatch.setattr(
        records_module, "_UPDATE", f"UPDATE records SET {changed} WHERE id = :id AND user_id = :user_id"
    )
    with DreamMemory(tmp_path / "old", config=config, embedder=HashingEmbedder()) as old:
        assert old.store.schema_version == 9
        old.add_many(turns)
        texts = old.store.fetchall("SELECT rowid, terms, context FROM records_fts ORDER BY rowid")
    monkeypatch.undo()
    with DreamMemory(tmp_path / "old", config=config, embedder=HashingEmbedder()) as migrated:
        assert migrated.store.schema_version == len(MIGRATIONS)
        after = migrated.store.fetchall(
            "SELECT f.rowid, f.terms, f.context, f.scope, r.user_id FROM records_fts f "
            "JOIN records r ON r.rowid = f.rowid ORDER BY f.rowid"
        )
        assert [tuple(r[:3]) for r in after] == [tuple(r) for r in texts]
        assert all(r[3].lower() == scope_token(r[4]) for r in after)
        old_ranks = {u: migrated.store.keyword_search(u, ["tea", "rain"], 10) for u in USERS}
    with DreamMemory(tmp_path / "new", config=config, embedder=HashingEmbedder()) as fresh:
        fresh.add_many(turns)
        new_ranks = {u: fresh.store.keyword_search(u, ["tea", "rain"], 10) for u in USERS}
    assert old_ranks == new_ranks
