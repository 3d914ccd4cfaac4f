"""A user's keyword ranking depends on that user's rows only (docs/RELIABILITY.md, item 11).

FTS5's ``bm25()`` takes rows, average length and document counts from the whole
table; the store ranks a user who shares the index with that user's own statistics.
The same records of one user, written to a store of their own and to a store full of
other users' look-alike records, must give the same ranked ids and scores for every
plan step (all terms, pairs, any term, frequent terms, the newest-matches window, time
windows), and the statistics must follow every write, forget and erasure.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from dreammem.stores import fts_query
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing.records import T0, put, rec
from dreammem.types import MemoryRecord, Status

WORDS = "kayak lisbon tea rain garden budget camera flight painted café quito".split()
QUERIES = (
    ["kayak"],
    ["tea", "rain"],
    ["budget", "camera", "flight"],
    ["painting", "cafe", "quito"],
    ["kayak", "lisbon", "tea", "rain"],
    ["3.5", "tea"],
)
ME = "me"


def _records(user: str, seed: int, count: int, spread: int = 1) -> list[MemoryRecord]:
    rng = random.Random(seed)
    out = []
    for n in range(count):
        words = [*rng.choices(WORDS, k=rng.randint(1, 9)), f"w{rng.randint(0, 30)}"]
        if rng.random() < 0.1:
            words.append("3.5")
        out.append(rec(user, " ".join(words), n * spread))
    return out


def _ranking(
    store: SQLiteRecordStore, ids: dict[int, str], terms: list[str], **plan: object
) -> list[tuple[str, float]]:
    found = store.keyword_search(ME, terms, **plan)  # type: ignore[arg-type]
    return [(ids[rowid], round(score, 9)) for rowid, score in found]


@pytest.fixture(scope="module")
def stores(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SQLiteRecordStore, SQLiteRecordStore, dict[int, str], dict[int, str]]]:
    """The user's records alone, and the same records among other users' (interleaved, look-alike)."""
    mine = _records(ME, 1, 150, spread=3)
    archived = [dataclasses.replace(r, status=Status.ARCHIVED) for r in mine[::7]]
    path = tmp_path_factory.mktemp("stats")
    alone, shared = SQLiteRecordStore(path / "alone.db"), SQLiteRecordStore(path / "shared.db")
    alone_ids = dict(zip(put(alone, mine), [r.id for r in mine], strict=True))
    shared_ids: dict[int, str] = {}
    others = [_records(f"other-{n}", 10 + n, 150 * (n + 1)) for n in range(3)]
    for start in range(0, 150, 30):  # the users' rows interleave in the shared store
        block = mine[start : start + 30]
        shared_ids.update(zip(put(shared, block), [r.id for r in block], strict=True))
        for n, theirs in enumerate(others):
            put(shared, theirs[start * (n + 1) : (start + 30) * (n + 1)])
    put(shared, [rec("other-long", "kayak tea rain " * 40, n) for n in range(50)])
    for store in (alone, shared):
        store.update(archived)
    yield alone, shared, alone_ids, shared_ids
    alone.close()
    shared.close()


@pytest.mark.parametrize("terms", QUERIES, ids=" ".join)
@pytest.mark.parametrize(
    "plan",
    [
        {"limit": 5},
        {"limit": 40},
        {"limit": 500},
        {"limit": 10, "max_term_share": 0.2},
        {"limit": 10, "since": T0 + timedelta(minutes=60), "until": T0 + timedelta(minutes=300)},
    ],
    ids=["5", "40", "500", "share", "window"],
)
@pytest.mark.parametrize("steps", ["default", "pairs", "newest"])
def test_the_ranking_among_other_users_is_the_ranking_alone(
    stores: tuple[SQLiteRecordStore, SQLiteRecordStore, dict[int, str], dict[int, str]],
    monkeypatch: pytest.MonkeyPatch,
    terms: list[str],
    plan: dict[str, object],
    steps: str,
) -> None:
    alone, shared, alone_ids, shared_ids = stores
    if steps == "pairs":  # the OR of pairs runs on these small match sets
        monkeypatch.setattr(fts_query, "PAIR_BUDGET", 5)
        monkeypatch.setattr(fts_query, "PAIR_SPREAD", 100)
        monkeypatch.setattr(fts_query, "PAIR_MAX_SHARE", 1.0)
    if steps == "newest":  # only the newest matches are ranked
        monkeypatch.setattr(fts_query, "RANK_WINDOW", 12)
        monkeypatch.setattr(fts_query, "FREQUENT_WINDOW", 12)
    for store in (alone, shared):
        store._term_shares.note_writes(10**9)  # noqa: SLF001 - white-box: cached shares of the patched plan
    by_alone = _ranking(alone, alone_ids, terms, **plan)
    assert by_alone or (terms == ["3.5", "tea"] and "since" in plan)
    assert _ranking(shared, shared_ids, terms, **plan) == by_alone


def test_the_statistics_follow_writes_forgets_and_erasure(tmp_path: Path) -> None:
    store = SQLiteRecordStore(tmp_path / "s.db")
    mine, theirs = _records(ME, 2, 40), _records("them", 3, 40)
    rowids = put(store, mine)
    put(store, theirs)
    before, whole = store.user_keyword_stats(ME)
    assert before is not None and before.rows == 40 and not whole

    def ranked() -> list[tuple[int, float]]:
        return store.keyword_search(ME, ["tea", "kayak"], 10)

    first = ranked()
    store.set_match_text(rowids[0], "tea tea tea tea", "kayak")  # cached counts must not survive
    moved = store.user_keyword_stats(ME)[0]
    assert moved is not None and moved.rows == 40 and moved.writes > before.writes
    assert ranked() != first and rowids[0] in dict(ranked())
    store.delete(ME, [mine[1].id])
    store.erase_records(ME, [mine[2].id], [mine[2].content])
    assert store.user_keyword_stats(ME)[0].rows == 38  # type: ignore[union-attr]
    want = store.fetchall(
        "SELECT count(*), sum(dm_fts_tokens(d.sz)) FROM records_fts_docsize d "
        "JOIN records r ON r.rowid = d.id WHERE r.user_id = ?",
        (ME,),
    )[0]
    stats = store.user_keyword_stats(ME)[0]
    assert stats is not None and (stats.rows, stats.tokens) == (want[0], want[1])
    store.erase_user("them")
    assert [tuple(r) for r in store.fetchall("SELECT user_id FROM keyword_users")] == [(ME,)]
    assert store.user_keyword_stats(ME)[1]  # alone now: FTS5 ranks with the same statistics
    store.erase_user(ME)
    assert store.user_keyword_stats(ME) == (None, False) and store.keyword_search(ME, ["tea"], 5) == []
    store.close()
