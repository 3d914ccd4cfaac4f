"""Transcript lines ("Priya: ..."): the speaker label is not the statement, and one speaker
never outdates another's statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.text.speakers import speaker_label
from dreammem.types import Role, Status
from dreammem.write.relations import possibly_outdated_by
from dreammem.write.statements import analyse
from dreammem.write.updates import Action, decide

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


def test_a_speaker_label_is_set_apart_from_the_statement() -> None:
    line = analyse("Priya: The bakery opens at 7 on weekdays.")
    assert line.speaker == "priya"
    assert "priya" not in line.topics and "priya" not in line.names | line.lead_names
    assert line.text == "Priya: The bakery opens at 7 on weekdays."
    assert speaker_label("Mary Ann: I moved to Denver.") == ("mary ann", "I moved to Denver.")


@pytest.mark.parametrize(
    "text",
    [
        "Correction: I'm based in York, not Leeds.",
        "Note: the dentist moved to Thursday.",
        "Monday: gym, Wednesday: swim.",
        "Heads up: the team sync moved to Wednesdays.",
        "I moved to York: the rent is lower.",
    ],
)
def test_header_words_and_inner_colons_are_not_speakers(text: str) -> None:
    assert analyse(text).speaker is None
    assert speaker_label(text) == (None, text)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # without the labels the newer line refines (supersedes) the older one
        (
            "My pottery class is on Tuesday evenings.",
            "Your pottery class sounds fun, I might join on Tuesday evenings.",
        ),
        # without the labels the older line would be marked possibly outdated
        (
            "Thanks, Lena. Still saving up for my sailing boat.",
            "I love sailing. Can't wait to see your sailing boat!",
        ),
    ],
)
def test_another_speakers_line_does_not_outdate_a_statement(old: str, new: str) -> None:
    unlabelled = decide(analyse(new), analyse(old), similarity=0.8, closest=True)
    assert unlabelled is not None and unlabelled.action in {Action.REFINE, Action.UNSURE}

    decision = decide(analyse(f"Marcus: {new}"), analyse(f"Priya: {old}"), similarity=0.8, closest=True)

    assert decision is not None and decision.action is Action.COEXIST
    assert decision.rule == "different_speaker" and "said by marcus, not priya" in decision.reason


def test_the_same_speaker_still_updates_their_own_statement() -> None:
    decision = decide(
        analyse("Priya: Actually, I moved to York last month."),
        analyse("Priya: I live in Leeds."),
        similarity=0.8,
        closest=True,
    )
    assert decision is not None and decision.action is Action.SUPERSEDE


def test_a_transcript_keeps_each_speakers_statement_current(memory: DreamMemory) -> None:
    old = "Priya: My pottery class is on Tuesday evenings."
    memory.add(old, user_id="u1", event_time=T0)
    memory.add("Marcus: Your pottery class sounds fun, I might join on Tuesday evenings.", user_id="u1",
               event_time=T0 + timedelta(days=2))  # fmt: skip
    memory.add("Priya: Actually, my pottery class moved to Thursday evenings.", user_id="u1",
               event_time=T0 + timedelta(days=7))  # fmt: skip

    records = {
        r.content: r for r in memory.get_all(user_id="u1", status=None, limit=100) if r.role is Role.USER
    }

    marcus = records["Marcus: Your pottery class sounds fun, I might join on Tuesday evenings."]
    assert marcus.is_active and not possibly_outdated_by(marcus)
    assert records[old].status is Status.SUPERSEDED
    assert records["Priya: Actually, my pottery class moved to Thursday evenings."].is_active


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("小王：今天我去了图书馆。", ("小王", "今天我去了图书馆。")),
        ("小王: 明天见", ("小王", "明天见")),
        ("欧阳娜娜：我最近在学吉他", ("欧阳娜娜", "我最近在学吉他")),
        ("Gina：I finally fixed the bike.", ("gina", "I finally fixed the bike.")),
    ],
)
def test_a_chinese_or_full_width_label_is_read(text: str, label: tuple[str, str]) -> None:
    assert speaker_label(text) == label
    assert analyse(text).speaker == label[0]


@pytest.mark.parametrize(
    "text",
    [
        "更正：我的经理是老李",
        "注意：明天停电",
        "星期一：游泳",
        "他说：明天会下雨",
        "我觉得：这样不好",
        "10:30 开会",
    ],
)
def test_chinese_headers_and_reported_speech_are_not_speakers(text: str) -> None:
    assert speaker_label(text) == (None, text)


# Held back: written after the rule, never used to shape it. Measured: 9 of 12 read right; the
# misses are an unlisted header ("备忘"), a four-character header ("会议纪要") and a clause
# before a colon ("我搬家了"). The test keeps that level (a wrong one is listed when it fails).
HELD_BACK = [
    ("李明：周末一起去打球吧", "李明"),
    ("张老师：作业明天交", "张老师"),
    ("阿强: 我到家了", "阿强"),
    ("王小丫：我换工作了，现在在杭州", "王小丫"),
    ("Chen Wei：see you at noon", "chen wei"),
    ("地点：人民广场", None),
    ("提醒：出门带伞", None),
    ("妈妈问：你吃饭了吗", None),
    ("老板强调：不能迟到", None),
    ("备忘：买牛奶", None),
    ("会议纪要：讨论了预算", None),
    ("我搬家了：新家离公司很近", None),
]


def test_held_back_transcript_lines_are_mostly_read_right() -> None:
    wrong = [(text, speaker_label(text)[0]) for text, want in HELD_BACK if speaker_label(text)[0] != want]
    assert len(wrong) <= 3, wrong
