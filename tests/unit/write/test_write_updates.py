"""Write-time conflict resolution beyond slots: supersede, coexist, unsure, and why."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, WriteConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import NotFoundError, ScopeError, ValidationError
from dreammem.types import MemoryRecord, Role, Status
from dreammem.write.relations import DECISION_KEY, OUTDATED_WHY_KEY, possibly_outdated_by
from dreammem.write.resolve import MAX_ANALYSED_CHARS, SAYS_MORE, Candidate, analyse_record, resolve_updates
from dreammem.write.statements import analyse
from dreammem.write.updates import Action, decide

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)

UPDATES = [
    ("I take my coffee with regular milk.", "I switched to oat milk in my coffee."),
    ("Our daily standup is at 9:30.", "The standup moved to 10:00 starting next week."),
    ("The best way to reach me is on Slack.", "I've stopped checking Slack; text me from now on."),
    ("周报每周四发给我。", "以后周报都改成周五发。"),
    ("我住在北京。", "我上个月搬到杭州了。"),
    ("联系我最好用微信。", "以后别发微信了，改成打我手机。"),
]
KEEPS = [
    ("I like hiking on weekends.", "I also swim twice a week."),
    ("My sister lives in Paris.", "My brother lives in Rome."),
    ("The report is due Friday.", "The slides are due next Wednesday."),
    ("我周末喜欢爬山。", "我每周也游两次泳。"),
    ("I drink coffee in the morning.", "The traffic on the way home was terrible today."),
]


def _statements(
    memory: DreamMemory, old: str, new: str, user: str = "u1"
) -> tuple[MemoryRecord, MemoryRecord]:
    memory.add(old, user_id=user, event_time=T0)
    memory.add("Got it.", user_id=user, role="assistant", event_time=T0 + timedelta(minutes=1))
    memory.add("It rained a lot this week.", user_id=user, event_time=T0 + timedelta(days=1))
    memory.add(new, user_id=user, event_time=T0 + timedelta(days=7))
    records = memory.get_all(user_id=user, status=None, limit=100)
    return (
        next(r for r in records if r.content == old and r.role is Role.USER),
        next(r for r in records if r.content == new and r.role is Role.USER),
    )


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_a_change_supersedes_the_older_statement_with_its_reason(
    memory: DreamMemory, old: str, new: str
) -> None:
    before, after = _statements(memory, old, new)
    assert before.status is Status.SUPERSEDED and after.is_active
    note = before.system[DECISION_KEY]
    assert note["action"] in {"supersede", "refine"} and note["rule"] and note["reason"]
    history = memory.history(after.id, user_id="u1")
    assert any(r.content == old and DECISION_KEY in r.system for r in history)
    assert all(r.content != old for r in memory.get_all(user_id="u1"))


@pytest.mark.parametrize(("first", "second"), KEEPS)
def test_compatible_statements_both_stay_active(memory: DreamMemory, first: str, second: str) -> None:
    a, b = _statements(memory, first, second)
    assert a.is_active and b.is_active


def test_unsure_leaves_both_active_and_marks_the_older(memory: DreamMemory) -> None:
    old, new = _statements(
        memory, "I like answers in long detailed paragraphs.", "Keep answers short, bullet points."
    )
    assert old.is_active and new.is_active
    assert possibly_outdated_by(old) == (new.id,)


def test_call_me_instead_of_emailing_supersedes_the_email_preference_not_the_name(
    memory: DreamMemory,
) -> None:
    memory.add("Call me Bob.", user_id="u1", event_time=T0)
    email, _call = _statements(
        memory,
        "For project updates I prefer email.",
        "Actually, call me instead of emailing - my inbox is a mess.",
    )
    assert email.status is Status.SUPERSEDED and email.superseded_by is not None
    names = [r for r in memory.get_all(user_id="u1") if r.content == "Call me Bob."]
    assert names and all(r.is_active for r in names)


def test_another_users_statements_are_never_touched(memory: DreamMemory) -> None:
    memory.add("I take my coffee with regular milk.", user_id="alice", event_time=T0)
    memory.add("I switched to oat milk in my coffee.", user_id="bob", event_time=T0 + timedelta(days=1))
    assert all(r.is_active for r in memory.get_all(user_id="alice", status=None))


def _no_neighbours(records: Sequence[MemoryRecord], *_: object) -> list[list[Candidate]]:
    return [[] for _ in records]


def test_a_foreign_candidate_is_a_scope_error() -> None:
    new = MemoryRecord(user_id="bob", content="I switched to oat milk.", role=Role.USER, event_time=T0)
    foreign = MemoryRecord(
        user_id="alice", content="I drink regular milk.", role=Role.USER, event_time=T0 - timedelta(days=1)
    )

    def neighbours(records: Sequence[MemoryRecord], vectors: np.ndarray, k: int) -> list[list[Candidate]]:  # type: ignore[type-arg]
        return [[Candidate(foreign, 0.9)] for _ in records]

    with pytest.raises(ScopeError):
        resolve_updates([new], np.ones((1, 4), dtype=np.float32), neighbours)


def test_a_search_that_sees_the_writes_own_records_finds_the_same_older_ones() -> None:
    """Neo4j's search may see the write's uncommitted records, FAISS never does: the same decision."""
    old = MemoryRecord(user_id="u1", content=UPDATES[0][0], role=Role.USER, event_time=T0)
    batch = [
        MemoryRecord(user_id="u1", content=f"It rained a lot on day {n}.", role=Role.USER, event_time=T0)
        for n in range(1, 10)
    ]
    new = MemoryRecord(user_id="u1", content=UPDATES[0][1], role=Role.USER, event_time=T0 + timedelta(days=7))
    stored = [Candidate(old, 0.5)]

    def blind(records: Sequence[MemoryRecord], vectors: np.ndarray, k: int) -> list[list[Candidate]]:  # type: ignore[type-arg]
        return [stored[:k] for _ in records]

    def seeing(records: Sequence[MemoryRecord], vectors: np.ndarray, k: int) -> list[list[Candidate]]:  # type: ignore[type-arg]
        return [([Candidate(r, 0.9) for r in batch] + stored)[:k] for _ in records]

    vectors = np.ones((len(batch) + 1, 4), dtype=np.float32)
    decided = [
        [(o.old.id, o.new.id, o.decision.action) for o in resolve_updates([*batch, new], vectors, search)]
        for search in (blind, seeing)
    ]
    assert (old.id, new.id, Action.SUPERSEDE) in decided[0]
    assert decided[1] == decided[0]


def test_bad_input_is_a_typed_error_and_huge_text_is_bounded() -> None:
    with pytest.raises(ValidationError):
        analyse_record(MemoryRecord(user_id="u1", content="  "))
    with pytest.raises(ValidationError):
        resolve_updates(
            [MemoryRecord(user_id="u1", content="x")], np.ones((2, 4), dtype=np.float32), _no_neighbours
        )
    huge = analyse_record(MemoryRecord(user_id="u1", content="I switched to oat milk. " + "milk " * 200_000))
    assert "milk" in huge.topics and len(huge.text) == MAX_ANALYSED_CHARS


def test_mixed_language_statements_are_compared() -> None:
    old = analyse("我的咖啡要加普通牛奶 (regular milk)。")
    new = analyse("I switched to oat milk in my coffee, 改成燕麦奶。")
    decision = decide(new, old, similarity=0.6, closest=True)
    assert decision is not None and decision.action is Action.SUPERSEDE


def test_resolution_can_be_switched_off(tmp_path: Path) -> None:
    config = DreamMemConfig(write=WriteConfig(resolve_updates=False))
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), config=config) as memory:
        old, _ = _statements(
            memory, "I take my coffee with regular milk.", "I switched to oat milk in my coffee."
        )
        assert old.is_active


def test_an_update_decision_can_be_reverted(memory: DreamMemory) -> None:
    old, new = _statements(
        memory, "I take my coffee with regular milk.", "I switched to oat milk in my coffee."
    )
    assert old.status is Status.SUPERSEDED
    back = memory.revert_update(old.id, user_id="u1")
    assert back.is_active and back.superseded_by is None and "update_reverted" in back.system
    turns = [r for r in memory.get_all(user_id="u1") if r.content == old.content]
    assert turns and all(r.is_active for r in turns)
    assert old.id in memory.recall("regular milk coffee", user_id="u1", k=5).ids
    with pytest.raises(ValidationError):
        memory.revert_update(new.id, user_id="u1")
    with pytest.raises(NotFoundError):
        memory.revert_update(old.id, user_id="someone-else")


def test_a_long_turn_is_left_alone(memory: DreamMemory) -> None:
    long_old = (
        "I take my coffee with regular milk. We went to the lake on Sunday and swam for hours. "
        "Then we had a picnic with sandwiches and talked about the new job for a long while."
    )
    old, _ = _statements(memory, long_old, "I switched to oat milk in my coffee.")
    assert old.is_active and possibly_outdated_by(old) == ()


def test_two_speakers_in_one_memory_never_update_each_other(memory: DreamMemory) -> None:
    memory.add(
        "I take my coffee with regular milk.", user_id="u1", event_time=T0, metadata={"speaker": "Ann"}
    )
    memory.add(
        "I switched to oat milk in my coffee.",
        user_id="u1",
        event_time=T0 + timedelta(days=1),
        metadata={"speaker": "Ben"},
    )
    assert all(r.is_active and not possibly_outdated_by(r) for r in memory.get_all(user_id="u1"))


# Diary events sharing a person, a meal or a place: what happened stays true, so neither one
# is superseded or marked. Only the first pair was looked at while building the rule.
EVENTS = [
    ("Dinner with Ana at the Thai place", "Played chess with Ana after dinner"),
    ("Lunch with Marco at the noodle bar", "Watched a film with Marco after lunch"),
    ("Went swimming with Lea at the lake", "Cooked pasta with Lea after the swim"),
    ("Coffee with Priya near the office", "Walked Priya to the train after coffee"),
    ("和小王在火锅店吃了晚饭", "晚饭后和小王下了两盘棋"),
    ("上午和妈妈去超市买了菜", "下午和妈妈一起包了饺子"),
]


@pytest.mark.parametrize(("first", "second"), EVENTS)
def test_two_events_are_never_updates_of_one_another(memory: DreamMemory, first: str, second: str) -> None:
    a, b = _statements(memory, first, second)
    assert a.is_active and b.is_active
    assert possibly_outdated_by(a) == () and possibly_outdated_by(b) == ()


def test_an_event_still_replaces_a_standing_value_and_a_correction_an_event(memory: DreamMemory) -> None:
    home, moved = _statements(memory, "I live in Boston.", "I sold the condo in Boston and moved to Denver.")
    assert home.status is Status.SUPERSEDED and moved.is_active
    lunch = analyse("Had lunch with Omar at the harbour")
    fixed = decide(
        analyse("Correction: lunch with Omar was at the station"), lunch, similarity=0.5, closest=True
    )
    assert fixed is not None and fixed.action is Action.SUPERSEDE
    chess = analyse("Played chess with Omar after lunch")
    assert decide(chess, lunch, similarity=0.5, closest=True) is None


# Phrasings the two rules below were not designed on (only the Carol and Tom Becker ones were).
TWO_FACTS = [
    ("Hi, I'm Carol. For project updates I prefer email.", "Actually, call me instead of emailing.", "Carol"),
    ("My name is Dev Malhotra. I take my coffee with regular milk.", "I switched to oat milk.", "Dev"),
    ("I work at Globex. I live in Leeds.", "I moved to York last month.", "Globex"),
    ("我叫王芳。周报每周四发给我。", "以后周报都改成周五发。", "王芳"),
]


@pytest.mark.parametrize(("old", "new", "kept"), TWO_FACTS)
def test_a_change_to_one_of_two_facts_marks_the_statement_and_keeps_the_other(
    memory: DreamMemory, old: str, new: str, kept: str
) -> None:
    before, after = _statements(memory, old, new)
    assert before.is_active and possibly_outdated_by(before) == (after.id,)
    note = before.system[OUTDATED_WHY_KEY][after.id]
    assert note["rule"] == SAYS_MORE and kept in note["reason"]
    assert any(kept in r.content for r in memory.get_all(user_id="u1"))  # still recalled as current


def test_a_single_fact_statement_is_still_superseded(memory: DreamMemory) -> None:
    before, _ = _statements(memory, "I live in Leeds.", "I moved to York last month.")
    assert before.status is Status.SUPERSEDED


NEWS_ABOUT_A_NAMED_PERSON = [
    ("My manager is Tom Becker; he signs off anything above 10k.", "Tom Becker wants the pipeline migrated."),
    ("My dentist is Ana Ruiz.", "Ana Ruiz moved her practice to Elm Street."),
    ("My landlord is Greg Hill.", "Greg Hill switched the rent to a bank transfer."),
]


@pytest.mark.parametrize(("old", "new"), NEWS_ABOUT_A_NAMED_PERSON)
def test_news_about_a_person_never_replaces_who_that_person_is_to_the_user(
    memory: DreamMemory, old: str, new: str
) -> None:
    before, after = _statements(memory, old, new)
    assert before.is_active and after.is_active
    assert DECISION_KEY not in before.system or before.system[DECISION_KEY]["action"] != "supersede"


# Two items of one family, each with its own value (only the laptop/monitor pair was looked at).
TWO_ITEMS = [
    ("The laptop budget is 1,500 dollars.", "The monitor budget is 400 dollars."),
    ("The travel budget is 2,000 euros.", "The catering budget is 800 euros."),
    ("My gym membership costs 40 dollars.", "My phone plan costs 25 dollars."),
    ("The marketing deadline is May 3.", "The design deadline is May 10."),
]


@pytest.mark.parametrize(("first", "second"), TWO_ITEMS)
def test_two_items_with_their_own_values_are_not_one_value_replaced(first: str, second: str) -> None:
    decision = decide(analyse(second), analyse(first), similarity=0.6, closest=True)
    assert decision is None or not decision.replaces


def test_the_same_item_with_a_new_value_still_replaces_it() -> None:
    old = analyse("The budget for the offsite is 5,000 dollars.")
    decision = decide(analyse("The offsite budget is now 6,500 dollars."), old, similarity=0.6, closest=True)
    assert decision is not None and decision.replaces
    moved = decide(analyse("I live in Denver."), analyse("I live in Boston."), similarity=0.6, closest=True)
    assert moved is not None and moved.replaces


def test_a_batch_compares_each_statement_with_its_closest_earlier_ones_only() -> None:
    """In one batch a statement meets its most similar earlier statements, not every one."""
    old = MemoryRecord(
        user_id="u1", content="I take my coffee with regular milk.", role=Role.USER, event_time=T0
    )
    fillers = [
        MemoryRecord(
            user_id="u1",
            content=f"I take my coffee with almond milk at desk {n}.",
            role=Role.USER,
            event_time=T0,
        )
        for n in range(20)
    ]
    new = MemoryRecord(
        user_id="u1",
        content="I switched to oat milk in my coffee.",
        role=Role.USER,
        event_time=T0 + timedelta(days=1),
    )
    batch = [old, *fillers, new]
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(batch), 16)).astype(np.float32)
    vectors[-1] = vectors[0] + 0.1 * vectors[-1]  # the new statement is closest to the old one
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

    outcomes = resolve_updates(batch, vectors, _no_neighbours)

    replaced = [o for o in outcomes if o.new.id == new.id and o.decision.replaces]
    assert [o.old.id for o in replaced] == [old.id]
    compared = {o.old.id for o in outcomes if o.new.id == new.id}
    # One at a time, the new statement would meet its eight nearest older ones; so it does in a batch
    # (it used to meet all 21 and mark 20 of them possibly outdated).
    assert len(compared) == 8


# Phrasings of session 7 (causes found on the update suite, tested here on other wordings).
MORE_UPDATES = [
    # a team's attributes are the user's own: "our team" is not someone else
    ("My office is in building B.", "They moved our team to a new office in building D."),
    # the words between "pushed" and "to" are the subject, not part of the cue
    ("The invoice review is due on the 3rd.", "Finance pushed the invoice review back to the 10th."),
    # a name that opens the newer sentence ties it to the older one naming it
    ("For taxes I go to Priya at Hill & Co.", "Priya moved away; my accountant is now Sam Ortiz."),
    # a clause-initial or possessed Chinese holder is one; a passing mention is not
    ("我每周给自己买书最多花三百。", "有了孩子以后，每周买书上限改成五百。"),
]


@pytest.mark.parametrize(("old", "new"), MORE_UPDATES)
def test_more_changes_supersede(memory: DreamMemory, old: str, new: str) -> None:
    before, after = _statements(memory, old, new)
    assert before.status is Status.SUPERSEDED and after.is_active


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("You can address me as Professor Kim.", "Just call me Hana, the title is not needed."),
        ("I go by Max at work.", "Call me Maximilian from now on."),
    ],
)
def test_other_ways_of_giving_a_name_are_one_name(memory: DreamMemory, old: str, new: str) -> None:
    before, after = _statements(memory, old, new)
    assert before.status is Status.SUPERSEDED and after.is_active


def test_a_relatives_statement_still_never_replaces_the_users() -> None:
    decision = decide(analyse("我姐姐搬到上海了。"), analyse("我住在杭州。"), similarity=0.9, closest=True)
    assert decision is not None and decision.action is Action.COEXIST
    assert analyse("女儿的钢琴课调到周四了。").holders == {"女儿"}
    assert analyse("孩子们从普通话班换到韩语班了。").holders == {"孩子"}
    assert analyse("我父母卖了房子。").holders == {"父母"}
    assert analyse("有了孩子以后，每月买菜上限调到三千。").holders == frozenset()
    assert analyse("They moved our team to the 12th floor.").holders == frozenset()
