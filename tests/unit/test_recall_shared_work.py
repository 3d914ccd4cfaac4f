"""Work a recall does once: one fusion for the paths that fuse the same lists, one decoder per statement."""

from __future__ import annotations

from dreammem.recall.base import Candidate, SearchMemo
from dreammem.recall.fusion import fused_once, reciprocal_rank_fusion
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.codec import from_row, from_rows
from dreammem.types import MemoryRecord
from tests.unit.test_record_codec import full_record


def _lists() -> dict[str, list[Candidate]]:
    return {
        "keyword": [Candidate(3, 2.0), Candidate(1, 1.5), Candidate(3, 1.0)],
        "vector": [Candidate(1, 0.9), Candidate(2, 0.8, timed=True)],
    }


def test_fused_once_is_the_fusion_of_those_lists() -> None:
    ranked = _lists()
    assert fused_once(SearchMemo(), ranked, k=10) == reciprocal_rank_fusion(ranked, k=10)


def test_fused_once_fuses_the_same_lists_once_per_recall() -> None:
    memo, ranked = SearchMemo(), _lists()
    first = fused_once(memo, ranked, k=10)
    assert fused_once(memo, dict(ranked), k=10) is first  # the same list objects
    assert fused_once(memo, ranked, k=60) is not first  # another constant
    other = {**ranked, "vector": list(ranked["vector"])}
    assert fused_once(memo, other, k=10) is not first  # another list, even with equal items
    assert fused_once(SearchMemo(), ranked, k=10) is not first  # another recall


def _store_with(records: list[MemoryRecord]) -> SQLiteRecordStore:
    store = SQLiteRecordStore()
    store.insert(records, ["words"] * len(records))
    return store


def test_from_rows_decodes_as_from_row() -> None:
    full = full_record()
    store = _store_with([full, MemoryRecord(user_id=full.user_id, content="hi", metadata={"k": [1]})])
    rows = store.fetchall("SELECT rowid AS rid, * FROM records ORDER BY rowid")
    assert from_rows(rows) == [from_row(row) for row in rows]
    assert from_rows([]) == []


def test_records_with_the_same_stored_text_share_no_mapping() -> None:
    user = "u1"
    first = MemoryRecord(user_id=user, content="a", entities=("Mia",), metadata={"k": ["x"]})
    second = MemoryRecord(user_id=user, content="b", entities=("Mia",), metadata={"k": ["x"]})
    store = _store_with([first, second])
    one, two = store.get(user, [first.id, second.id])
    assert one.entities == two.entities == ("Mia",)
    assert one.metadata == two.metadata and one.metadata is not two.metadata
    one.metadata["k"].append("y")  # type: ignore[index]
    assert store.get(user, [second.id])[0].metadata == {"k": ["x"]}
