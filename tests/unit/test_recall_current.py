"""The current value first: a newer memory an older hit points at leads, the older one is marked."""

from __future__ import annotations

import dataclasses
import gc
import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreammem import DreamMemory
from dreammem.agent_api import memory_block
from dreammem.config import DreamMemConfig, WriteConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.current import CURRENT_PATHS, current_first
from dreammem.recall.result import Hit
from dreammem.system_meta import SystemMeta
from dreammem.types import MemoryRecord, Status
from dreammem.write.relations import OUTDATED_BY_KEY
from tests.marks import mark_outdated

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)


def _rec(text: str, days: int, *, newer: Sequence[str] = (), status: Status = Status.ACTIVE) -> MemoryRecord:
    meta: SystemMeta = {OUTDATED_BY_KEY: list(newer)} if newer else {}
    return MemoryRecord("u1", text, event_time=T0 + timedelta(days=days), system=meta, status=status)


def _fetch(records: Sequence[MemoryRecord]):  # type: ignore[no-untyped-def]
    by_id = {r.id: r for r in records}

    def fetch(ids: Sequence[str]) -> Mapping[str, MemoryRecord]:
        return {i: by_id[i] for i in ids if i in by_id}

    return fetch


def test_newer_hit_moves_before_the_older_one_which_is_marked() -> None:
    new = _rec("call me instead of emailing", 2)
    old = _rec("I prefer email", 1, newer=[new.id])
    other = _rec("my cat is Miso", 0)
    hits = [Hit(old, 0.9, ("vector",)), Hit(other, 0.5, ("vector",)), Hit(new, 0.4, ("keyword",))]
    out = current_first(hits, _fetch([old, other, new]))
    assert [h.id for h in out] == [new.id, old.id, other.id]
    assert out[1].outdated_by == (new.id,) and out[0].outdated_by == ()


def test_a_newer_memory_no_path_found_is_fetched_and_chains_are_followed() -> None:
    newest = _rec("standup at 10:30", 3)
    mid = _rec("standup at 10:00", 2, newer=[newest.id])
    old = _rec("standup at 9:30", 1, newer=[mid.id])  # only mid says it may replace old
    out = current_first([Hit(old, 0.8, ("vector",))], _fetch([old, mid, newest]))
    assert [h.id for h in out] == [newest.id, mid.id, old.id]
    assert out[0].paths == CURRENT_PATHS and out[1].outdated_by == (newest.id,)


def test_a_value_between_shows_at_its_own_rank_when_it_is_a_hit() -> None:
    newest = _rec("standup at 10:30", 3)
    mid = _rec("standup at 10:00", 2, newer=[newest.id])
    old = _rec("standup at 9:30", 1, newer=[mid.id, newest.id])
    other = _rec("the standup room is B12", 0)
    hits = [Hit(old, 0.9, ("vector",)), Hit(other, 0.7, ("vector",)), Hit(mid, 0.5, ("keyword",))]
    out = current_first(hits, _fetch([old, mid, newest, other]))
    assert [h.id for h in out] == [newest.id, old.id, other.id, mid.id]
    assert out[3].outdated_by == (newest.id,) and out[3].paths == ("keyword",)


def test_someone_who_moved_often_leaves_room_for_other_hits() -> None:
    moves = _restatements("I moved to a new city", 6)  # each marked by every later move
    sister = _rec("my sister lives in Paris", 0)
    hits = [Hit(moves[0], 0.9, ("vector",)), Hit(sister, 0.8, ("vector",))]
    out = current_first(hits, _fetch([*moves, sister]), shown=3)
    assert [h.id for h in out] == [moves[5].id, moves[0].id, sister.id]
    assert out[1].outdated_by == tuple(r.id for r in moves[1:])


def test_the_ordering_leaves_no_reference_cycle_for_the_collector() -> None:
    newest = _rec("standup at 10:30", 3)
    mid = _rec("standup at 10:00", 2, newer=[newest.id])
    old = _rec("standup at 9:30", 1, newer=[mid.id])
    hits = [Hit(old, 0.8, ("vector",)), Hit(mid, 0.5, ("keyword",))]
    gc.collect()
    gc.disable()
    try:
        out = current_first(hits, _fetch([old, mid, newest]))
        del out
        assert gc.collect() == 0  # everything it made was freed by reference counting
    finally:
        gc.enable()


def test_inactive_or_unknown_newer_ids_do_not_mark() -> None:
    gone = _rec("forgotten newer", 2, status=Status.DELETED)
    old = _rec("I prefer email", 1, newer=[gone.id, "f" * 32])
    out = current_first([Hit(old, 0.8, ("vector",))], _fetch([old, gone]))
    assert [h.id for h in out] == [old.id] and out[0].outdated_by == ()


def test_each_newer_id_is_looked_up_once() -> None:
    gone = _rec("a newer value since forgotten", 5, status=Status.DELETED)
    newest = _rec("standup at 10:30", 4, newer=[gone.id])
    olders = [_rec(f"standup at 9:{n}0", n, newer=[newest.id, gone.id]) for n in range(4)]
    asked: list[str] = []
    fetch = _fetch([*olders, newest, gone])

    def counting(ids: Sequence[str]) -> Mapping[str, MemoryRecord]:
        asked.extend(ids)
        return fetch(ids)

    out = current_first([Hit(r, 0.9 - r.event_time.day / 100, ("vector",)) for r in olders], counting)
    assert sorted(asked) == sorted([newest.id, gone.id])  # the deleted one is not asked for again
    assert [h.id for h in out] == [newest.id, *(r.id for r in olders)]
    assert all(h.outdated_by == (newest.id,) for h in out[1:]) and out[0].outdated_by == ()


def test_cycles_end() -> None:
    a = _rec("a", 1)
    b = _rec("b", 2, newer=[a.id])
    a = MemoryRecord("u1", "a", id=a.id, event_time=a.event_time, system={OUTDATED_BY_KEY: [b.id]})
    out = current_first([Hit(a, 0.5, ("vector",)), Hit(b, 0.4, ("vector",))], _fetch([a, b]))
    assert sorted(h.id for h in out) == sorted([a.id, b.id])


def test_newer_records_that_point_at_each_other_still_lead() -> None:
    a = _rec("standup at 10:00", 2)
    b = _rec("standup at 10:30", 3, newer=[a.id])
    a = dataclasses.replace(a, system={OUTDATED_BY_KEY: [b.id]})
    old = _rec("standup at 9:30", 1, newer=[a.id, b.id])
    out = current_first([Hit(old, 0.8, ("vector",))], _fetch([old, a, b]))
    assert {h.id for h in out[:2]} == {a.id, b.id} and out[2].id == old.id  # no latest among them: both


def test_recall_and_block_show_the_current_value_first(memory: DreamMemory) -> None:
    new = memory.add(
        "Actually please phone me about project updates", user_id="u1", event_time=T0 + timedelta(days=1)
    )
    mark_outdated(
        memory, memory.add("For project updates I prefer email", user_id="u1", event_time=T0), new.id
    )
    mark_outdated(memory, memory.add("email " * 3 + "project updates by email", user_id="u2"), new.id)
    result = memory.recall("project updates by email", user_id="u1", k=5)
    contents = [h.record.content for h in result]
    assert contents.index(new.content) < contents.index("For project updates I prefer email")
    block = memory_block(memory, "project updates by email", user_id="u1")
    assert block is not None
    lines = block.text.splitlines()[1:-1]
    assert lines[0].endswith(new.content) and "[earlier, possibly outdated]" in lines[1]
    assert all(h.record.user_id == "u1" for h in result)  # another user's mark never crosses


def test_a_mark_on_the_same_text_twin_counts(tmp_path: Path) -> None:
    # the mark is set by hand here: write-time resolution is off so it cannot add its own
    config = DreamMemConfig(write=WriteConfig(resolve_updates=False))
    memory = DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), config=config)
    new = memory.add("The standup moved to 10:00", user_id="u1", event_time=T0 + timedelta(days=1))
    # a turn and an explicit fact with the same text: only the fact carries the mark
    memory.add("Standup is at 9:30 every day", user_id="u1", event_time=T0)
    mark_outdated(memory, memory.remember("Standup is at 9:30 every day", user_id="u1", pinned=False), new.id)
    result = memory.recall("Standup is at 9:30 every day", user_id="u1", k=5)
    old = next(h for h in result if h.record.content.startswith("Standup is at 9:30"))
    assert old.outdated_by == (new.id,)
    assert result.ids.index(new.id) < result.ids.index(old.id)


def test_a_newer_twin_moves_its_hit_forward_instead_of_showing_twice() -> None:
    turn = _rec("I switched to green tea", 2)
    fact = _rec("I switched to green tea", 2)  # the fact written from the turn, collapsed into its hit
    old = _rec("I drink coffee every morning", 1, newer=[fact.id])
    other = _rec("my cat is Miso", 0)
    hits = [Hit(old, 0.9, ("vector",)), Hit(other, 0.5, ("vector",)), Hit(turn, 0.4, ("keyword",))]
    assert [h.id for h in current_first(hits, _fetch([old, other, turn, fact]))] == [
        fact.id,  # without the alias the same text would come twice
        old.id,
        other.id,
        turn.id,
    ]
    out = current_first(hits, _fetch([old, other, turn, fact]), aliases={fact.id: turn.id})
    assert [h.id for h in out] == [turn.id, old.id, other.id]
    assert out[0].paths == ("keyword",) and out[1].outdated_by == (fact.id,)


def test_recall_shows_a_turn_and_its_fact_once_when_an_older_hit_points_at_the_fact(tmp_path: Path) -> None:
    config = DreamMemConfig(write=WriteConfig(resolve_updates=False))
    memory = DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), config=config)
    memory.add("I love green tea in the morning now", user_id="u1", event_time=T0 + timedelta(days=1))
    (fact,) = [r for r in memory.store.find("u1") if r.layer.value == "semantic"]
    coffee = memory.remember("Morning coffee, black, every day", user_id="u1", pinned=False)
    mark_outdated(memory, coffee, fact.id)
    result = memory.recall("green tea or coffee in the morning?", user_id="u1", k=5)
    texts = [h.record.content for h in result]
    assert texts.count("I love green tea in the morning now") == 1
    old = next(h for h in result if h.record.content.startswith("Morning coffee"))
    assert old.outdated_by == (fact.id,)
    assert texts.index("I love green tea in the morning now") < texts.index(old.record.content)


def _restatements(habit: str, count: int) -> list[MemoryRecord]:
    """``count`` restatements of one habit, oldest first, each marked by every later one."""
    out: list[MemoryRecord] = []
    for n in reversed(range(count)):
        out.insert(0, _rec(f"{habit}, take {n}", n, newer=[r.id for r in out]))
    return out


def test_only_the_hits_that_can_be_shown_are_ordered_and_their_newer_records_read() -> None:
    cycle, tea, gym = (
        _restatements(h, 6) for h in ("I cycle to work", "I drink green tea", "gym on Mondays")
    )
    every_record = [*cycle, *tea, *gym]
    hits = [Hit(cycle[0], 0.9, ("vector",)), Hit(tea[0], 0.8, ("vector",)), Hit(gym[2], 0.7, ("keyword",))]
    every = current_first(hits, _fetch(every_record))
    asked: list[str] = []
    fetch = _fetch(every_record)

    def counting(ids: Sequence[str]) -> Mapping[str, MemoryRecord]:
        asked.extend(ids)
        return fetch(ids)

    out = current_first(hits, _fetch(every_record), shown=4)
    assert [(h.id, h.outdated_by, h.paths) for h in out[:4]] == [
        (h.id, h.outdated_by, h.paths) for h in every[:4]
    ]
    assert [h.id for h in out[:4]] == [cycle[5].id, cycle[0].id, tea[5].id, tea[0].id]
    assert out[-1].id == gym[2].id  # nothing ranked is dropped; below the cut, unmarked
    assert out[-1].outdated_by == () and every[-1].outdated_by != ()
    one = current_first(hits, counting, shown=1)
    assert one[0].id == every[0].id == cycle[5].id
    assert set(asked) == {
        r.id for r in cycle[1:]
    }  # the other habits' restatements are below the cut: not read


def test_the_shown_hits_match_ordering_every_hit_on_random_mark_graphs() -> None:
    rng = random.Random(16)
    for _ in range(150):
        records = [_rec(f"note {n}", n) for n in range(rng.randrange(2, 12))]
        marked = [
            dataclasses.replace(
                r, system={OUTDATED_BY_KEY: [o.id for o in rng.sample(records, rng.randrange(3))]}
            )
            for r in records
        ]
        status = [Status.ACTIVE if rng.random() < 0.8 else Status.DELETED for _ in marked]
        marked = [dataclasses.replace(r, status=s) for r, s in zip(marked, status, strict=True)]
        hits = [
            Hit(r, 1.0 - n / 20, ("vector",)) for n, r in enumerate(rng.sample(marked, len(marked) // 2 + 1))
        ]
        every = current_first(hits, _fetch(marked))
        for shown in range(1, len(every) + 1):
            out = current_first(hits, _fetch(marked), shown=shown)
            assert [(h.id, h.outdated_by) for h in out[:shown]] == [
                (h.id, h.outdated_by) for h in every[:shown]
            ]
            assert {h.id for h in hits} <= {h.id for h in out}
