"""A keyword step matching more rows than ``RANK_WINDOW`` ranks only the newest of them.

``bm25()`` costs microseconds per matching row, so a term held by a tenth of a million
memories cost hundreds of milliseconds however the plan ran. Over the window, a step
ranks its newest ``RANK_WINDOW`` matches (the user's own in a scoped search, inside the
time window when there is one) with the scores the full ranking gives them; under it,
nothing changes: every match is ranked, as before.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores import fts_query
from dreammem.stores.sqlite import SQLiteRecordStore
from tests.keyword_alone import ranked_alone

WORDS = "kayak lisbon tea rain garden budget camera flight".split()
T0 = datetime(2024, 1, 1, tzinfo=UTC)
WINDOW = 12
CONFIG = DreamMemConfig(recall=RecallConfig(context_window_turns=1))


def _turns(seed: int, users: dict[str, int], count: int) -> list[dict[str, object]]:
    """``count`` turns of random lengths, owners drawn by weight, one hour apart."""
    rng = random.Random(seed)
    owners = [u for u, weight in users.items() for _ in range(weight)]
    return [
        {
            "content": " ".join([*rng.choices(WORDS, k=rng.randint(1, 8)), f"w{rng.randint(0, 99999)}"]),
            "user_id": rng.choice(owners),
            "event_time": T0 + timedelta(hours=n),
        }
        for n in range(count)
    ]


@pytest.fixture(scope="module", params=[3, 4])
def memory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DreamMemory]:
    """One user holding most rows ("me"), one holding few ("few"); searched, never written."""
    path = tmp_path_factory.mktemp("window") / "store"
    with DreamMemory(path, config=CONFIG, embedder=HashingEmbedder()) as memory:
        memory.add_many(_turns(request.param, {"me": 8, "few": 2}, 400))
        yield memory


@pytest.fixture
def window(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(fts_query, "RANK_WINDOW", WINDOW)
    return WINDOW


def _ranked(
    store: SQLiteRecordStore, user: str, match: str, since: datetime | None = None
) -> list[tuple[int, float]]:
    """Every active match of the user ranked by bm25() over the user's rows alone (the reference)."""
    return ranked_alone(store, user, match, since)


def _newest(store: SQLiteRecordStore, match: str, user: str | None, span: tuple[int, int]) -> set[int]:
    """The ``WINDOW`` newest rows matching ``match`` in a row id span (only ``user``'s when given)."""
    where, params = ("", []) if user is None else (" AND r.user_id = ?", [user])
    rows = store.fetchall(
        "SELECT f.rowid FROM records_fts f JOIN records r ON r.rowid = f.rowid "
        f"WHERE records_fts MATCH ? AND f.rowid BETWEEN ? AND ?{where} ORDER BY f.rowid DESC LIMIT ?",
        (match, *span, *params, WINDOW),
    )
    return {int(r[0]) for r in rows}


def _span(store: SQLiteRecordStore, user: str, since: datetime) -> tuple[int, int]:
    """The row ids of the user's active records from ``since`` on."""
    row = store.fetchone(
        "SELECT MIN(rowid), MAX(rowid) FROM records "
        "WHERE user_id = ? AND status = 'active' AND event_time >= ?",
        (user, since.isoformat()),
    )
    assert row is not None
    return int(row[0]), int(row[1])


EVERYWHERE = (0, 2**63 - 1)


def _scores(rows: list[tuple[int, float]]) -> list[float]:
    return [round(s, 9) for _, s in rows]


@pytest.mark.parametrize("terms", [["kayak"], ["tea", "rain"], ["budget", "camera", "flight"]])
@pytest.mark.parametrize("limit", [1, 5, 40, 500])
@pytest.mark.parametrize("user", ["me", "few"])
def test_under_the_window_every_match_is_ranked_as_before(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch, terms: list[str], limit: int, user: str
) -> None:
    store = memory.store
    since = T0 + timedelta(hours=100)
    most = len(
        store.fetchall(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ?", (fts_query.match_any(terms),)
        )
    )
    default, results = fts_query.RANK_WINDOW, {}
    # The default window (over the whole store), and one just over the step's matches
    # (the window's query runs and finds too few rows), against the plan without one.
    for window in (default, most + 1, 10**9):
        monkeypatch.setattr(fts_query, "RANK_WINDOW", window)
        results[window] = (
            store.keyword_search(user, terms, limit),
            store.keyword_search(user, terms, limit, since=since),
        )
    assert most + 1 < store.count() < default
    assert results[10**9][0] and len(set(map(str, results.values()))) == 1


@pytest.mark.parametrize("terms", [["kayak"], ["garden"], ["tea", "rain"]])
def test_over_the_window_the_newest_matches_are_ranked_with_their_full_scores(
    memory: DreamMemory, window: int, terms: list[str]
) -> None:
    store = memory.store
    match = fts_query.match_all(terms)
    full = _ranked(store, "me", match)
    assert len(full) > window  # the step is over the window
    # "me" holds most rows, not all: the window is over its own rows, ranked with its own statistics.
    newest = _newest(store, match, "me", EVERYWHERE)
    got = store.keyword_search("me", terms, 5)
    assert {r for r, _ in got} <= newest
    assert _scores(got) == [s for r, s in full if r in newest][:5]
    assert all(dict(full)[r] == round(s, 9) for r, s in got)


def test_a_scoped_search_windows_the_users_own_matches(memory: DreamMemory, window: int) -> None:
    store = memory.store
    match = fts_query.match_any(["tea"])
    mine = _ranked(store, "few", match)
    assert len(mine) > window
    newest = _newest(store, match, "few", EVERYWHERE)
    got = store.keyword_search("few", ["tea"], 5)
    assert {r for r, _ in got} <= newest
    assert _scores(got) == [s for r, s in mine if r in newest][:5]


def test_a_time_window_windows_the_matches_inside_it(memory: DreamMemory, window: int) -> None:
    store = memory.store
    since = T0 + timedelta(hours=150)
    match = fts_query.match_any(["lisbon"])
    inside = _ranked(store, "me", match, since)
    assert len(inside) > window
    newest = _newest(store, match, "me", _span(store, "me", since))
    got = store.keyword_search("me", ["lisbon"], 5, since=since)
    assert {r for r, _ in got} <= newest
    assert _scores(got) == [s for r, s in inside if r in newest][:5]


def test_too_few_of_the_users_rows_in_the_window_rank_every_match(tmp_path: Path, window: int) -> None:
    """The newest matches are another user's: they neither fill nor narrow the user's ranking."""
    with DreamMemory(tmp_path / "crowded", config=CONFIG, embedder=HashingEmbedder()) as memory:
        at = [T0 + timedelta(hours=n) for n in range(80 + window)]
        memory.add_many(
            [{"content": f"tea note {n}", "user_id": "me", "event_time": at[n]} for n in range(80)]
        )
        memory.add_many(
            [{"content": f"tea tea {n}", "user_id": "late", "event_time": at[80 + n]} for n in range(window)]
        )
        store = memory.store
        got = store.keyword_search("me", ["tea"], 5)
        assert len(got) == 5
        assert _scores(got) == [s for _, s in _ranked(store, "me", fts_query.match_any(["tea"]))][:5]
