"""Rules that find explicit memories in a user turn, in English and Chinese.

An explicit memory is something the user wants kept: "remember that ...", a stated
preference ("I prefer ...", "from now on ...", "以后..."), a hard constraint ("budget
must not exceed ...", "不超过..."), or a correction ("actually ...", "不是…而是…").
Such turns are written to long-term (semantic) memory at once, with a *slot*
(``subject/attribute``) when one can be read off, so that a newer value for the same
slot supersedes the older one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dreammem.text.entities import extract_entities
from dreammem.text.literal_gate import GatedText, LiteralGate
from dreammem.text.vocabulary import CONSTRAINT_TOPICS, HARD_LIMITS, word_pattern
from dreammem.types import Kind
from dreammem.write.keep_request import asks_to_keep

__all__ = ["Explicit", "detect_explicit", "is_question", "states_name"]


@dataclass(frozen=True, slots=True)
class Explicit:
    """What the rules found in a turn."""

    kind: Kind
    pinned: bool
    slot: str | None
    importance: int
    correction: bool = False


_I = re.IGNORECASE
# Only a request to keep something pins (dreammem.write.keep_request): "Remember: ...",
# "please remember my ...", "don't forget I ..."; "Remember this photo?" is a recollection.
_QUESTION_END = re.compile(r"[?？]\s*$|[吗呢么]\s*[。.!！]?\s*$")
_QUESTION_START = re.compile(
    r"(?:what|which|who|whom|whose|when|where|why|how|do|does|did|is|are|was|were|am|can|could|"
    r"should|would|will|shall|have|has|had)\b(?!.*\b(?:remember|don'?t forget|keep in mind)\b)",
    _I,
)
_QUESTION_ZH = re.compile(r"什么|哪|谁|几[个点时天]|多少|怎么|为什么|是否|是不是|有没有")
_CORRECTION = re.compile(
    r"^\s*(?:actually|correction|no,|i meant|sorry,? i meant|to correct)\b|\bnot\b[^.]{1,40}\bbut\b"
    r"|其实|更正|纠正|不是[^。，,]{1,20}而是|我说错了",
    _I,
)
_CONSTRAINT = re.compile(word_pattern((*HARD_LIMITS, *CONSTRAINT_TOPICS)), _I)
_PREFERENCE = re.compile(
    r"\b(?:i (?:really )?(?:prefer|like|love|enjoy|hate|dislike|want|need|use)|i don'?t (?:like|want)|"
    r"my fav(?:ou?rite)?|from now on|always|never|please (?:use|reply|respond|write|call)|call me)\b"
    r"|偏好|喜欢|不喜欢|讨厌|以后|下次|总是|一直用|请用|叫我",
    _I,
)

# "Call me Bob" names the user; "call me instead of emailing", "call me at 5" or
# "call me back" ask for a phone call. A name after "call me" is capitalised, or it is
# the whole rest of a short turn and no function word.
_CALL_ME_NOT_NAME = (
    r"(?:instead|back|at|on|in|about|after|before|when|whenever|if|tomorrow|tonight|today|later|now|"
    r"anytime|any|maybe|sometime|first|directly|again|soon|please|or|and|to|for|with|by|from|next|"
    r"this|the|a|an|asap|only|once|every|then|right)\b"
)
# "叫我小王" names the user; "有事叫我" / "叫我起床" ask for a call or a wake-up.
_CALL_ME_ZH = r"(?:^|[，,。！!\s请就都]|可以|你)叫我(?!起床|一声|一下|过去|过来|来|去|吃|做|的时候)"
_NAME_STATED = re.compile(
    rf"(?i:\b(?:my name is|i'?m called|i go by|(?:address|refer to) me as)\b)"
    rf"|\b(?i:call me) (?!(?i:{_CALL_ME_NOT_NAME}))(?:[A-Z][\w'-]*|\"[^\"]+\")"
    rf"|^\s*(?i:(?:please |just |you can )?call me) (?!(?i:{_CALL_ME_NOT_NAME}))[a-z][\w'-]*\s*[.!]?\s*$"
)

# (pattern, slot template): group "attr" names the attribute when the template uses it.
_SLOTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:report|file|document|export)s? (?:format|as|in)\b"
            r"|\b(?:excel|pdf|csv|word|markdown) (?:reports?|files?|format)\b",
            _I,
        ),
        "report format",
    ),
    (re.compile(r"\bbudget\b", _I), "budget"),
    # Not "due on": an invoice or order that is due is not the user's deadline, and one
    # slot for both let every new invoice supersede a project deadline.
    (re.compile(r"\bdeadline\b", _I), "deadline"),
    (re.compile(rf"{_CALL_ME_ZH}|我叫|我的名字"), "name"),
    (re.compile(r"我的(?P<attr>[\u4e00-\u9fff]{1,6}?)(?:是|为|改成|变成)"), "{attr}"),
    (re.compile(r"我(?:现在)?住在|我搬到"), "home city"),
    (re.compile(r"我(?:现在)?在[\u4e00-\u9fff\w]{1,20}(?:工作|上班)"), "employer"),
    (re.compile(r"用(?:中文|英文|英语|日语)(?:回答|回复|交流)"), "reply language"),
    (re.compile(r"(?:报告|文件|文档)(?:格式|用)"), "report format"),
    (
        re.compile(r"\bmy (?:fav(?:ou?rite)?|preferred) (?P<attr>[a-z][a-z ]{1,30}?)\s+(?:is|are|was)\b", _I),
        "favorite {attr}",
    ),
    (
        re.compile(
            r"\bmy (?P<attr>name|email|e-mail|phone(?: number)?|address|birthday|title|role|job|company"
            r"|employer|timezone|time zone|budget|deadline|goal|team|manager|city|language)\b"
            r"(?:\s+\w+){0,2}?\s+(?:is|are|was|=|:)",
            _I,
        ),
        "{attr}",
    ),
    (_NAME_STATED, "name"),
    (re.compile(r"\bi (?:now )?live in\b|\bi moved to\b", _I), "home city"),
    (re.compile(r"\bi (?:now )?work (?:at|for)\b", _I), "employer"),
    (
        re.compile(
            r"\b(?:reply|respond|answer|write|talk)(?: to me)? in "
            r"(?:english|chinese|french|german|spanish|japanese|[a-z]+)\b",
            _I,
        ),
        "reply language",
    ),
    (re.compile(r"预算"), "budget"),
    (re.compile(r"截止(?:日期|时间)?|最后期限"), "deadline"),
)


# Chinese attribute words mapped onto the English slot names, so that a value stated
# in one language supersedes the same attribute stated in the other.
_ZH_ATTRS = {
    "预算": "budget", "名字": "name", "姓名": "name", "邮箱": "email", "电话": "phone",
    "手机号": "phone", "手机号码": "phone", "电话号码": "phone", "地址": "address",
    "生日": "birthday", "公司": "employer", "老板": "manager", "上司": "manager", "经理": "manager",
    "城市": "home city", "截止日期": "deadline", "目标": "goal", "团队": "team", "时区": "timezone",
}  # fmt: skip


# Words before "budget"/"deadline" that say whose or which one, not what it is for.
_NOT_QUALIFIER = ("the", "my", "our", "your", "this", "that", "total", "overall", "whole", "new")
_EN_QUALIFIER = rf"(?!(?:{'|'.join(_NOT_QUALIFIER)})\b)[a-z]{{3,20}}"
# "我们厨房的预算": the pronoun says whose budget it is, not what for.
_ZH_OWNER = re.compile(r"^(?:我们|咱们|你们|我的|我)")
_QUALIFIER = {
    "budget": re.compile(
        rf"\b(?:the |my |our |this )?(?:new )?(?P<en>{_EN_QUALIFIER}) budget\b"
        r"|\bbudget for (?:the |my |a |our )?(?:new )?"
        r"(?P<en2>[a-z]{3,20})\b|(?P<zh>[^\W\d的了是在新这个_]{2,4}?)的?预算",
        _I,
    ),
    "deadline": re.compile(
        rf"\b(?:the |my |our )?(?P<en>{_EN_QUALIFIER}) deadline\b"
        r"|\bdeadline for (?:the |my |our )?(?P<en2>[a-z]{3,20})\b"
        r"|(?P<zh>[^\W\d的了是在新这个_]{2,4}?)的?截止",
        _I,
    ),
}


def _qualifier(text: GatedText, slot: str) -> str | None:
    """What a budget or deadline is for ("laptop", "市场"), or None for the user's one.

    "Our budget for the tent": "Our" says whose budget, "tent" what it is for.
    """
    match = text.search(_QUALIFIER[slot])
    if match is None:
        return None
    word = (match.group("en") or match.group("en2") or _ZH_OWNER.sub("", match.group("zh") or "")).lower()
    return None if not word or word in _NOT_QUALIFIER else word


def _slot(text: GatedText) -> str | None:
    for pattern, template in _SLOTS:
        match = text.search(pattern)
        if match:
            attr = match.groupdict().get("attr")
            if attr:
                attr = " ".join(attr.lower().split())
                attr = _ZH_ATTRS.get(attr, attr)
            slot = template.format(attr=attr) if attr else template
            return f"user/{slot}"
    return None


# Budget and deadline are topics as well as values: "the budget meeting ran long" names
# the topic and states no value, and must not replace the user's stated budget.
_TOPIC_SLOTS = frozenset({"user/budget", "user/deadline"})
_LIMIT = re.compile(
    r"\b(?:must(?:n'?t| not)?|never|at most|no more than|not exceed|up to|limit|max(?:imum)?|cap)\b"
    r"|不超过|不能超过|上限|最多|以内|封顶",
    _I,
)
_NUMBER = r"(?:\d|[零一二两三四五六七八九十百千万亿])"
_TOPIC_VALUE = {
    "user/budget": re.compile(rf"(?:\bbudget\b|预算)[^.!?。！？]{{0,40}}?{_NUMBER}", _I),
    "user/deadline": re.compile(
        rf"(?:\bdeadline\b|截止)[^.!?。！？]{{0,40}}?(?:{_NUMBER}|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
        r"|\b(?:today|tonight|tomorrow|next|end of|eod|eow)\b|周[一二三四五六日天]|星期|明天|今天|下周|月底)",
        _I,
    ),
}
_TOPIC_ENTITY = {"user/budget": "amount", "user/deadline": "date"}


_TOPIC_WORDS = re.compile(r"\b(?:budget|deadline)\b|预算|截止", _I)


def _states_topic_value(text: GatedText, slot: str) -> bool:
    """Whether a turn about the budget or deadline states a value or a limit for it."""
    if text.search(_LIMIT) or text.search(_TOPIC_VALUE[slot]):
        return True
    return any(e.kind == _TOPIC_ENTITY[slot] for e in extract_entities(text.text))


# The patterns of an explicit memory, skipped on a turn that has none of the literals a match needs.
_GATE = LiteralGate(
    [
        _CORRECTION, _CONSTRAINT, _PREFERENCE, _LIMIT, *_TOPIC_VALUE.values(),
        *_QUALIFIER.values(), *(pattern for pattern, _ in _SLOTS),
    ]
)  # fmt: skip


def states_name(text: str) -> bool:
    """True when the text gives the user's name ("Call me Bob", "my name is ..."), not a channel."""
    return bool(_NAME_STATED.search(text))


def is_question(text: str) -> bool:
    """True for a question: it asks about a value rather than stating one."""
    stripped = text.strip()
    return bool(
        _QUESTION_END.search(stripped) or _QUESTION_START.match(stripped) or _QUESTION_ZH.search(stripped)
    )


def detect_explicit(text: str) -> Explicit | None:
    """The explicit memory in a user turn, or None for an ordinary turn.

    Questions ("What is my budget?", "我的预算是多少？") state nothing and are never
    explicit memories, unless they are a polite imperative to remember
    ("Can you remember that I'm vegetarian?").
    """
    gated = _GATE.view(text)
    pinned = asks_to_keep(text)
    if is_question(text) and not pinned:
        return None
    correction = bool(gated.search(_CORRECTION))
    constraint = bool(gated.search(_CONSTRAINT))
    preference = bool(gated.search(_PREFERENCE))
    slot = _slot(gated)
    if slot in _TOPIC_SLOTS and not correction and not _states_topic_value(gated, slot):
        slot = None  # a passing mention of the topic; "budget"/"deadline" alone is no constraint
        constraint = bool(_CONSTRAINT.search(_TOPIC_WORDS.sub(" ", text)))
    if slot in _TOPIC_SLOTS and (what := _qualifier(gated, slot.removeprefix("user/"))):
        slot = f"{slot}:{what}"  # "the laptop budget" and "the monitor budget" are two values
    if not (pinned or correction or constraint or preference or slot):
        return None
    if constraint and (slot in {"user/budget", "user/deadline"} or not preference):
        kind = Kind.CONSTRAINT
    elif preference:
        kind = Kind.PREFERENCE
    else:
        kind = Kind.FACT
    # A bare "only"/"never" in passing is not a rule; keep it only with a slot or a number.
    bare = not (pinned or correction or preference or slot) and kind is Kind.CONSTRAINT
    if bare and not re.search(r"\d|[零一二两三四五六七八九十百千万]", text):
        return None
    importance = 5 if pinned or kind is Kind.CONSTRAINT else 4
    return Explicit(kind=kind, pinned=pinned, slot=slot, importance=importance, correction=correction)
