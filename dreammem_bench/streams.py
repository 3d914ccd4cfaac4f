"""Deterministic synthetic conversation streams for the dream benchmark (English and Chinese).

Each stream is cut into batches (one dream each) of turns spread over four sessions.
A batch mixes what real agent conversations are made of: small talk and assistant
filler (about half), chatter with little lasting value, tool output, a few key events
(orders, meetings, invoices), repeated preferences, and - at fixed batches - hard
constraints with numbers, preference changes and corrections of earlier facts. The
probes say what must hold after the last dream: each constraint recallable verbatim,
and for each changed preference or corrected fact the newest value winning.

Everything comes from a seeded :class:`random.Random`, so a seed gives the same stream
on every machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["ChangeProbe", "ConstraintProbe", "Stream", "Turn", "make_stream"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a stream."""

    session_id: str
    role: str
    content: str
    event_time: datetime


@dataclass(frozen=True, slots=True)
class ConstraintProbe:
    """A hard constraint stated once; it must stay recallable verbatim."""

    text: str
    query: str
    batch: int


@dataclass(frozen=True, slots=True)
class ChangeProbe:
    """A preference or fact that changes over time; the newest value must win.

    Attributes:
        query: A question about it.
        values: Its values, oldest first (each a substring of the statements).
        changes_at: The batch at which each value after the first takes over.
    """

    query: str
    values: tuple[str, ...]
    changes_at: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Stream:
    """A stream cut into dream batches, with its probes."""

    language: str
    batches: tuple[tuple[Turn, ...], ...]
    constraints: tuple[ConstraintProbe, ...]
    changes: tuple[ChangeProbe, ...]

    @property
    def turns(self) -> int:
        """How many turns in all."""
        return sum(len(b) for b in self.batches)


@dataclass(frozen=True, slots=True)
class _Change:
    probe: ChangeProbe
    first: tuple[str, ...]  # templates for the first value, {v} = value
    change: str  # template stating a new value
    repeats: int  # statements per batch of the current value


_EN = {
    "noise_user": (
        "ok",
        "thanks!",
        "lol",
        "got it",
        "sounds good",
        "sure",
        "cool",
        "haha nice",
        "ok thanks",
        "yes",
        "hmm",
        "great, thanks",
        "perfect",
        "alright",
        "thank you so much",
    ),
    "noise_assistant": (
        "Sure, happy to help!",
        "Of course!",
        "Let me check that for you.",
        "You're welcome!",
        "Got it.",
        "Here is what I found.",
        "Anything else?",
        "No problem.",
        "Certainly!",
    ),
    "topics": (
        "the garden",
        "hiking trails",
        "the new coffee machine",
        "remote work",
        "a history podcast",
        "the office plants",
        "weekend plans",
        "the team lunch",
        "a documentary about whales",
        "the parking situation",
        "the quarterly offsite",
        "a book about habits",
        "the new chairs",
        "learning to bake bread",
        "the neighbours' dog",
        "a cycling route",
        "the city marathon",
    ),
    "chatter_user": (
        "We talked about {t} for a while",
        "I spent part of the afternoon thinking about {t}",
        "My colleague brought up {t} at lunch",
        "I read an article about {t} this morning",
        "Anna from marketing asked me about {t}",
        "Not much news, mostly {t} today",
        "Still undecided about {t}, to be honest",
    ),
    "chatter_assistant": (
        "I looked into {t} and drafted a few notes",
        "I summarised the discussion about {t}",
        "I collected some background on {t} for later",
        "I noted your thoughts on {t}",
    ),
    "tool": (
        "search returned {k} results for {t}",
        "calendar lookup found {k} free slots",
        "fetched {k} rows",
    ),
    "events": (
        "Order #{n5} ships on 2026-{m:02d}-{d:02d}",
        "Meeting with {co} on 2026-{m:02d}-{d:02d} at {h}:00",
        "Invoice INV-{n4} of {amt} USD is due on 2026-{m:02d}-{d:02d}",
        "Flight LH{n3} to Lisbon departs on 2026-{m:02d}-{d:02d}",
    ),
    "companies": ("Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Foods"),
}
_ZH = {
    "noise_user": (
        "好的",
        "谢谢",
        "嗯嗯",
        "哈哈",
        "收到",
        "明白了",
        "好的谢谢",
        "没问题",
        "可以",
        "哈哈哈",
        "好吧",
    ),
    "noise_assistant": ("好的，没问题", "好的，马上", "还有什么需要帮忙的吗？", "稍等", "没问题"),
    "topics": (
        "周末的安排",
        "新的咖啡机",
        "远程办公",
        "花园里的花",
        "一本历史书",
        "团队午餐",
        "办公室的绿植",
        "一部关于鲸鱼的纪录片",
        "停车的问题",
        "新的椅子",
        "学做面包",
        "骑行路线",
        "城市马拉松",
    ),
    "chatter_user": (
        "我们聊了聊{t}",
        "今天下午一直在想{t}",
        "同事午饭时提到了{t}",
        "早上看了一篇关于{t}的文章",
        "今天没什么新鲜事，主要是{t}",
        "说实话，{t}还没想好",
    ),
    "chatter_assistant": ("我查了一下{t}，写了几条笔记", "我整理了关于{t}的讨论", "我记下了你对{t}的想法"),
    "tool": ("搜索返回了{k}条关于{t}的结果", "日历查询找到{k}个空闲时段", "读取了{k}行数据"),
    "events": (
        "订单#{n5}将于2026年{m}月{d}日发货",
        "与{co}的会议定在2026年{m}月{d}日{h}点",
        "发票INV-{n4}金额{amt}元，2026年{m}月{d}日到期",
        "去里斯本的航班LH{n3}在2026年{m}月{d}日起飞",
    ),
    "companies": ("华为", "阿里巴巴", "腾讯", "京东", "小米", "美团"),
}

_CONSTRAINTS = {
    "en": (
        ConstraintProbe(
            "Our budget must not exceed 50,000 RMB; open-source stack only.", "What is our budget limit?", 0
        ),
        ConstraintProbe(
            "The launch deadline is 2026-03-15 and it cannot move.", "When is the launch deadline?", 1
        ),
        ConstraintProbe("Never share the customer list with vendors.", "Can we share the customer list?", 2),
        ConstraintProbe("Servers must have at most 64 GB of RAM.", "How much RAM may a server have?", 3),
    ),
    "zh": (
        ConstraintProbe("预算不超过人民币五万元，只能使用开源技术栈", "预算上限是多少？", 0),
        ConstraintProbe("上线截止日期是2026年3月15日，不能推迟", "上线截止日期是什么时候？", 1),
        ConstraintProbe("绝不能把客户名单发给供应商", "可以把客户名单发给供应商吗？", 2),
        ConstraintProbe("服务器内存最多64GB", "服务器内存上限是多少？", 3),
    ),
}
_CHANGES = {
    "en": (
        _Change(
            ChangeProbe("Which report format do I prefer?", ("Excel", "CSV", "Markdown"), (3, 7)),
            ("I prefer {v} reports over PDF", "Please send {v} reports, not PDF"),
            "Actually, from now on I prefer {v} reports over PDF",
            3,
        ),
        _Change(
            ChangeProbe("Which language should replies be in?", ("English", "German"), (5,)),
            ("Please reply in {v}",),
            "From now on, please reply in {v}",
            2,
        ),
        _Change(
            ChangeProbe("What is my favorite editor?", ("Vim", "Emacs"), (4,)),
            ("My favorite editor is {v}",),
            "My favorite editor is now {v}",
            2,
        ),
        _Change(
            ChangeProbe("Who is my manager?", ("Tom Becker", "Sarah Lee"), (6,)),
            ("My manager is {v}",),
            "Correction: my manager is {v} now",
            1,
        ),
    ),
    "zh": (
        _Change(
            ChangeProbe("报告用什么格式？", ("Excel", "CSV", "Markdown"), (3, 7)),
            ("报告格式用{v}", "请把报告格式用{v}"),
            "以后报告格式用{v}",
            3,
        ),
        _Change(
            ChangeProbe("我现在住在哪里？", ("北京", "上海"), (5,)),
            ("我现在住在{v}",),
            "我搬到{v}了",
            2,
        ),
        _Change(
            ChangeProbe("我的经理是谁？", ("王伟", "李娜"), (6,)),
            ("我的经理是{v}",),
            "更正：我的经理是{v}",
            1,
        ),
    ),
}
_SEEDS = {"en": 11, "zh": 29}
_SESSIONS = 4


def _value_at(change: _Change, batch: int) -> tuple[str, bool]:
    """The value in force at a batch, and whether it changes at this batch."""
    index = sum(1 for at in change.probe.changes_at if at <= batch)
    return change.probe.values[index], batch in change.probe.changes_at


def make_stream(
    language: str,
    *,
    seed: int = 0,
    batches: int = 10,
    per_batch: int = 200,
    start: datetime = datetime(2026, 1, 5, 9, 0, tzinfo=UTC),
) -> Stream:
    """Build a stream (``language`` is ``"en"`` or ``"zh"``).

    Raises:
        ValueError: unknown language, or batches too small for the planted statements.
    """
    if language not in _SEEDS:
        raise ValueError(f"language must be 'en' or 'zh', got {language!r}")
    words = _EN if language == "en" else _ZH
    rng = random.Random(_SEEDS[language] * 1000 + seed)
    cuts: list[tuple[Turn, ...]] = []
    for batch in range(batches):
        planted = _planted(language, batch, rng)
        filler_count = per_batch - len(planted)
        if filler_count < 0:
            raise ValueError("per_batch is too small")
        items = planted + [_filler(words, rng) for _ in range(filler_count)]
        rng.shuffle(items)
        day = start + timedelta(days=batch)
        turns = tuple(
            Turn(
                session_id=f"b{batch}-s{n * _SESSIONS // len(items)}",
                role=role,
                content=content,
                event_time=day + timedelta(minutes=n),
            )
            for n, (role, content) in enumerate(items)
        )
        cuts.append(turns)
    return Stream(
        language=language,
        batches=tuple(cuts),
        constraints=tuple(c for c in _CONSTRAINTS[language] if c.batch < batches),
        changes=tuple(p for p in (_probe_within(c.probe, batches) for c in _CHANGES[language]) if p),
    )


def _probe_within(probe: ChangeProbe, batches: int) -> ChangeProbe | None:
    """The probe cut to the changes a stream of ``batches`` batches contains (None: no change)."""
    changes = tuple(at for at in probe.changes_at if at < batches)
    if not changes:
        return None
    return ChangeProbe(probe.query, probe.values[: len(changes) + 1], changes)


def _planted(language: str, batch: int, rng: random.Random) -> list[tuple[str, str]]:
    items = [("user", c.text) for c in _CONSTRAINTS[language] if c.batch == batch]
    for change in _CHANGES[language]:
        value, changed = _value_at(change, batch)
        if changed:
            items.append(("user", change.change.format(v=value)))
        for _ in range(change.repeats):
            items.append(("user", rng.choice(change.first).format(v=value)))
    return items


def _filler(words: dict[str, tuple[str, ...]], rng: random.Random) -> tuple[str, str]:
    roll = rng.random()
    topic = rng.choice(words["topics"])
    if roll < 0.30:
        return "user", rng.choice(words["noise_user"])
    if roll < 0.48:
        return "assistant", rng.choice(words["noise_assistant"])
    if roll < 0.72:
        return "user", rng.choice(words["chatter_user"]).format(t=topic)
    if roll < 0.85:
        return "assistant", rng.choice(words["chatter_assistant"]).format(t=topic)
    if roll < 0.95:
        return "tool", rng.choice(words["tool"]).format(k=rng.randint(2, 40), t=topic)
    template = rng.choice(words["events"])
    return "user", template.format(
        n5=rng.randint(10000, 99999),
        n4=rng.randint(1000, 9999),
        n3=rng.randint(100, 999),
        m=rng.randint(2, 12),
        d=rng.randint(1, 28),
        h=rng.randint(9, 17),
        amt=f"{rng.randint(2, 90) * 100:,}",
        co=rng.choice(words["companies"]),
    )
