"""Only statements that state a value replace or mark another (chit-chat and reports do not).

The phrasings here are new: neither the update benchmark's nor the dream benchmark's
streams. A statement states a value when it says what holds (a preference, a fact about
the user or their world) or what changed; a report of talk, reading or thought about a
topic, or an undecided statement, states none.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.types import MemoryRecord, Role, Status
from dreammem.write.relations import possibly_outdated_by
from dreammem.write.statements import analyse
from dreammem.write.updates import Action, decide

T0 = datetime(2026, 5, 4, 8, tzinfo=UTC)

# (older, newer): two statements about one topic of which the newer states no value.
CHATTER = [
    ("My cousin and I chatted about the new bakery on Elm Street.", "We chatted about the new gym there."),
    ("Over dinner we discussed the new parking rules.", "We discussed the office move over coffee."),
    ("I was reading a blog post about sourdough starters.", "I read a news story about sourdough bread."),
    ("Someone at the gym brought up the marathon.", "My trainer brought up the new marathon route."),
    ("My neighbour asked me about the new bus timetable.", "My neighbour asked me about the bike lanes."),
    ("I haven't decided which gym to join.", "Still not sure about the gym near work."),
    ("我和妈妈聊到了新开的超市。", "我和同事聊到了新开的健身房。"),
    ("晚上看了一个关于露营装备的视频。", "刷到一篇关于露营的文章。"),
    ("周末去哪玩还没决定。", "周末去哪里露营还没想好。"),
    ("午饭的时候同事说起了新的报销流程。", "开会时大家讨论了新的报销流程。"),
]  # fmt: skip

# (older, newer): the newer one states a new value; it must still replace (or mark) the older one.
VALUES = [
    ("I get my groceries delivered on Tuesdays.", "Grocery delivery moved to Thursdays."),
    ("I commute by bike every day.", "I switched to taking the tram to work."),
    ("My piano teacher is Mrs. Olsen.", "Actually my piano teacher is Mr. Haddad now."),
    ("We talked about it, and I live in Porto.", "I moved to Lisbon last spring."),
    ("我每天骑车上班。", "我现在改坐地铁上班了。"),
    ("孩子的游泳课在周六上午。", "孩子的游泳课调到周日下午了。"),
    ("我习惯用印象笔记记东西。", "以后我都用语雀记笔记了。"),
]


def _decision(old: str, new: str):  # type: ignore[no-untyped-def]
    return decide(analyse(new), analyse(old), similarity=0.8, closest=True)


@pytest.mark.parametrize(("old", "new"), CHATTER)
def test_chatter_about_one_topic_decides_nothing(old: str, new: str) -> None:
    assert not analyse(new).states_value
    assert _decision(old, new) is None


@pytest.mark.parametrize(("old", "new"), VALUES)
def test_a_new_value_still_replaces_the_older_statement(old: str, new: str) -> None:
    assert analyse(new).states_value
    decision = _decision(old, new)
    assert decision is not None and decision.replaces, decision


def test_a_value_in_the_clause_beside_a_report_still_counts() -> None:
    # The report covers "about it" up to the comma; "I prefer tea now" is a value with a cue.
    statement = analyse("We talked about it for ages, but I prefer tea now.")
    assert statement.states_value and statement.mild_cue
    # Thinking about a move is not a move: the cue inside the reported topic does not count.
    thought = analyse("I've been thinking about moving to Lisbon.")
    assert not thought.states_value and not thought.strong_cues
    assert _decision("I live in Porto.", "I've been thinking about moving to Lisbon.") is None
    # "about to" and "about an hour" are no topic.
    assert analyse("I think the team sync is about to move to Friday.").states_value
    assert analyse("I read for about an hour every night.").states_value
    # "brought up in" is where someone was raised, a place.
    assert analyse("I was brought up in Leeds.").states_value
    # A request that opens with the verb is no report; a value beside an undecided clause counts.
    assert analyse("Ask me about the budget before booking anything.").states_value
    assert analyse("I still haven't decided, but for now I'm on Notion.").states_value
    assert not analyse("I haven't decided on a hotel for the trip.").states_value


def test_an_older_report_is_not_outdated_by_a_value() -> None:
    assert _decision("We chatted about oat milk at the office.", "I take oat milk in my tea now.") is None


def test_two_items_with_their_own_codes_or_values_stay_side_by_side() -> None:
    assert _decision("Parcel DX4471 arrives on Monday.", "Parcel DX9902 arrives on Thursday.") is None
    assert _decision("The kitchen budget is 8,000 euros.", "The bathroom budget is 3,000 euros.") is None
    assert _decision("厨房装修预算八万。", "卫生间装修预算三万。") is None
    # The same item with a change cue is still an update.
    moved = _decision("Parcel DX4471 arrives on Monday.", "Parcel DX9902 replaced it; it arrives Thursday.")
    assert moved is not None and moved.replaces
    # The same item with another value and no cue is marked, not ignored.
    same = _decision("The kitchen budget is 8,000 euros.", "The kitchen budget is 9,500 euros.")
    assert same is not None and same.action in {Action.UNSURE, Action.SUPERSEDE}


def test_a_habit_stated_again_with_lately_is_marked_not_superseded() -> None:
    # Settled: a drink is not single-valued and the two share no topic word, so the newer one
    # is put first and the older marked possibly outdated; nothing is retired on this evidence.
    decision = _decision("我一般点拿铁。", "我最近常点的是澳白。")
    assert decision is not None and decision.action is Action.UNSURE


def _write(memory: DreamMemory, old: str, new: str) -> tuple[MemoryRecord, MemoryRecord]:
    memory.add(old, user_id="u", event_time=T0)
    memory.add("Sure, noted.", user_id="u", role="assistant", event_time=T0 + timedelta(minutes=1))
    memory.add(new, user_id="u", event_time=T0 + timedelta(days=3))
    records = memory.get_all(user_id="u", status=None, limit=50)
    return (
        next(r for r in records if r.content == old and r.role is Role.USER),
        next(r for r in records if r.content == new and r.role is Role.USER),
    )


@pytest.mark.parametrize(("old", "new"), [CHATTER[0], CHATTER[3], CHATTER[6], CHATTER[9]])
def test_the_write_path_marks_no_chatter(memory: DreamMemory, old: str, new: str) -> None:
    before, after = _write(memory, old, new)
    assert before.is_active and after.is_active
    assert possibly_outdated_by(before) == ()


@pytest.mark.parametrize(("old", "new"), [VALUES[1], VALUES[5]])
def test_the_write_path_still_supersedes_a_value(memory: DreamMemory, old: str, new: str) -> None:
    before, after = _write(memory, old, new)
    assert before.status is Status.SUPERSEDED and before.superseded_by == after.id
