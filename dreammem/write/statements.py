"""What a user statement is about, read off its words (English and Chinese, no model).

:func:`analyse` turns a statement into a :class:`Statement`: the attribute families
it touches (contact channel, schedule, place, food, ...), whose attribute it is
(the user, or "my sister", "the kids"), its topic words, and the cues that say it
changes something ("actually", "switched", "改成", "不再") or adds to it ("also",
"也"). :mod:`dreammem.write.updates` compares two statements with these.

The family lexicon is deliberately coarse: it says which *kind* of attribute a
statement is about, not which slot; whether two statements are about the same
attribute is decided with their embedding similarity and shared topic words.

Not every statement states a value (:attr:`Statement.states_value`). A report of talk,
reading or thought names a topic without saying what holds ("we talked about remote
work", "she asked me about the new office", "同事午饭时提到了远程办公"), and an undecided one
says that nothing holds yet ("I haven't decided on the hotel", "远程办公还没想好"): the
cues and tense of such a statement are read off the clause around the report only, and
neither kind replaces, or casts doubt on, another statement.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

from dreammem.text.entities import extract_entities
from dreammem.text.literal_gate import GatedText, LiteralGate
from dreammem.text.speakers import speaker_label
from dreammem.text.tokenize import STOPWORDS, contains_cjk, tokenize
from dreammem.text.vocabulary import WEEKDAYS
from dreammem.write.rules import states_name

__all__ = ["SINGLE_VALUED", "Statement", "analyse"]

_I = re.IGNORECASE


def _en(*words: str) -> str:
    r"""An alternation of English words with their plain inflections, matched as whole words.

    A word ending in ``\\w*`` (``relocat\\w*``) is a stem and matches any ending.
    """
    return r"\b(?:" + "|".join(words) + r")(?:s|es|ed|d|ing)?\b"


# family -> (English stems, Chinese words). A statement may touch several families.
_FAMILIES: dict[str, tuple[str, str]] = {
    "contact": (
        _en(
            r"e-?mail", r"g?mail", "inbox", r"call(?:ing|s)?\b", r"phone?", "ring", r"text(?:s|ing)?\b",
            "sms", r"messag\w*", "slack", "whatsapp", "telegram", "signal", "wechat", "reach", "contact",
            r"remind\w*", "ping", "voicemail",
        ),
        "邮件|邮箱|电话|手机|短信|微信|钉钉|飞书|联系|通知|找我|提醒|QQ|企业微信|打给我",
    ),
    "schedule": (
        _en(
            *WEEKDAYS, "weekday",
            "weekend", "daily", "weekly", "monthly", "every", "morning", "afternoon", "evening",
            r"\d{1,2}(?::\d{2})?\s?(?:am|pm)\b", r"\d{1,2}:\d{2}", "noon", "o'clock", "standup",
            "stand-up", "sync", "meeting", "retro", "lesson", "class", "appointment", r"reschedul\w*",
            "wake", "waking", "pick", "term", "shift",
        ),
        r"周[一二三四五六日天末]|星期|礼拜|每周|每天|早上|上午|中午|下午|晚上|[一二三四五六七八九十两\d]点|站会|例会|"
        r"会议|课|预约|起床|接孩子|周报|月报|复盘",
    ),
    "place": (
        _en(
            "live", "living", "home", "house", "apartment", "flat", "based", "move", "moving",
            r"relocat\w*", "city", "town", r"neighbou?rhood", r"settle", "place", "address",
        ),
        "住|家|搬|城市|定居|老家|区|地址",
    ),
    "work": (
        _en(
            "work", "job", "office", "company", "employer", "role", "engineer", "analyst", "analytics",
            r"commut\w*", "remote", "floor", "career", "position", "hired", "quit", r"promot\w*",
            "department",
        ),
        "工作|上班|公司|离职|职位|岗|办公|远程|坐班|楼|工程师|经理|入职|跳槽|部门",
    ),
    "food": (
        _en(
            "eat", "food", "cuisine", "vegetarian", "vegan", "pescatarian", "diet", "lunch", "dinner",
            "breakfast", "meal", "spicy", "chili", "salad", "pizza", "sushi", "dish", "cook", "wrap",
            "meat", "fish", "chicken", "snack",
        ),
        "吃|菜|素|饭|辣|沙拉|披萨|寿司|聚餐|饮食|肉|鱼|零食|[早午晚]餐",
    ),
    "drink": (
        _en(
            "drink", "coffee", "tea", "milk", "latte", "espresso", "flat white", "cappuccino", "water",
            "juice", "beer", "wine", "sugar", "cup", "soda",
        ),
        "喝|咖啡|茶|奶|拿铁|水|糖|杯|酒|饮料|澳白",
    ),
    "tools": (
        _en(
            "use", "using", "app", "tool", "editor", "ide", "vim", "emacs", "vs ?code", "software",
            "browser", "laptop", "notes", "track", "jira", "trello", "chrome", "firefox", "safari",
            "iphone", "pixel", "android", "mac", "windows", "linux", "obsidian", "evernote", "notion",
            "phone is", r"migrat\w*",
        ),
        "用|软件|编辑器|浏览器|手机|笔记|电脑|工具|系统|管理任务",
    ),
    "format": (
        _en(
            "format", "pdf", "excel", "csv", "word doc", "docx", "markdown", "slides", "powerpoint", "ppt",
            "bullet", "paragraph", "answer", r"repl(?:y|ies|ied)", "short", "detailed", "unit", "celsius",
            "fahrenheit",
            "metric", "imperial", "dates?", "iso", "links?",
        ),
        "格式|文件|表格|单位|摄氏|华氏|回答|要点|日期|幻灯片|链接|PPT|PDF|Excel",
    ),
    "people": (
        _en(
            "manager", "boss", "dentist", "doctor", "lawyer", "partner", "mentor", "teacher", "friend",
            "named", "called", "dog", "cat", "pet", "colleague", "coach", "accountant", "run with",
        ),
        "领导|老板|牙医|医生|律师|搭档|导师|老师|朋友|狗|猫|宠物|同事|教练|会计",
    ),
    "name": (
        _en(
            "name", "call me", "called", "go by", "surname", "last name", "username", "nickname",
            "address me", "title",
        ),
        "名字|叫我|称呼|姓|用户名|英文名|昵称",
    ),
    "quantity": (
        _en(r"\d+\s?(?:people|persons?|km|miles?|pills?|cups?|chairs?|times|kids|guests|seats)", "table for"),
        r"[一二两三四五六七八九十百千\d]+\s?(?:个人|人|公里|片|把|杯|次|位)",
    ),
    "budget": (
        _en(
            "budget", "cost", "spend", "price", "cap", "limit", "under", "up to", "afford", "dollars?",
            "euros?", "pounds?", r"\d+k\b",
        )
        + r"|[$€£¥]",
        "预算|花|钱|元|块|上限|以内|不超过|标准|礼金",
    ),
    "deadline": (
        _en("deadline", "due", "closes?", "submit", "finish", "before", "extend", "until", "by (?:the )?end"),
        "截止|交|之前|到期|延长|延期|签",
    ),
    "language": (
        _en(
            "english", "chinese", "mandarin", "spanish", "french", "german", "japanese", "korean",
            "portuguese", "italian", "language", "subtitle", "learn",
        ),
        "中文|英文|英语|法语|德语|日语|韩语|西班牙语|葡萄牙语|普通话|语言|字幕|学",
    ),
    "travel": (
        _en(
            "fly", "flight", "airline", "seat", "window", "aisle", "hotel", "train", "rail", "trip",
            "holiday", "vacation", "travel", "points", "lufthansa", "klm", "marriott", "hilton",
        ),
        "飞机|航班|航空|座位|靠窗|过道|酒店|高铁|火车|出差|旅行|暑假|假期|国航|东航",
    ),
    "hobby": (
        _en(
            r"hik\w*", r"swim\w*", r"run\w*", "play", "guitar", "violin", "piano", "read", "books?", "paint",
            "yoga",
            "tennis", "sport", "hobby", r"climb\w*",
        ),
        "爬山|游泳|跑步|弹|吉他|小提琴|钢琴|看书|小说|画画|瑜伽|网球|运动|爱好",
    ),
}  # fmt: skip

SINGLE_VALUED = frozenset({"place", "work", "name", "budget", "deadline", "language", "people", "tools"})
"""Families where one holder has one current value: a different value replaces the old
one even without a change cue (a user lives in one city, has one manager)."""

_STRONG_EN = (
    r"\b(?:actually|instead|switch(?:ed|ing)?|chang(?:e|ed|ing)|from now on|no longer|any ?more|no more|"
    r"moved|moving|relocat\w*|correction|i meant|replac\w*|migrat\w*|dropped|stopp?(?:ed)?|quit|"
    r"gave up|given up|left|leaving|reschedul\w*|postpon\w*|delay\w*|extended|"
    r"brought forward|cancel+ed|cut (?:down|to)|reduced|raised?|increased?|decreased?|after all|"
    r"earlier|sooner|push(?:ed)?(?=(?: \w+){0,3} (?:back|to)\b)|retired|not \w+ anymore|new|started|starting|"
    r"built up|deleted|got rid|sold|"
    r"go by|become|became|jumped|agreed|ditch\w*)\b"
)
_STRONG_ZH = (
    r"其实|改[成为到用坐去学订加姓了]|换[成了到一]|以后|今后|不再|"
    r"别[^，。,.!！]{0,8}了|不[^，。,.!！]{1,5}了|搬[到走]|提前|推迟|延长|延期|挪到|调[到走]|更正|纠正|"
    r"取消|离职|退休|转岗|迁到|已经不|不用[^，。,.!！]{0,6}了|还是改|变成|砍到|提高到|降到|涨|不算|开始|"
    r"从[^，。,.!！]{1,10}(?:换|搬|改)|现在改|不要[^，。,.!！]{0,8}了"
)
_MILD = (
    r"\b(?:now|these days|lately|nowadays|currently|recently|at the moment|this (?:term|year|quarter))\b"
    r"|现在|最近|目前|如今|这学期"
)
# "too" adds only at a clause's end ("I like tea too."); "too formal" is a degree.
_ADDITIVE = (
    r"\b(?:also|too(?=\s*(?:[,.;!?]|$))|as well|in addition|another|besides|on top of)\b"
    r"|也|还有|另外|同时|还养|此外"
)
_NEGATION = r"\b(?:no|not|never|don'?t|doesn'?t|won'?t|stop|without)\b|不|别|没|无需|不用|不要"

# People and animals whose attributes a statement may be about instead of the user's. A team
# is not one: the user belongs to it, so "they moved our team to the 12th floor" is about
# the user's office. A Chinese holder is one when it is possessed ("我父母", "女儿的") or opens
# a clause ("孩子们换了班"); a passing mention ("有了孩子以后", "去学校接孩子") holds nothing.
_HOLDERS_EN = (
    r"\b(?:my|our|the)\s+(sister|brother|parents?|mother|mom|mum|father|dad|wife|husband|partner|"
    r"son|daughter|kids?|children|friend|neighbou?r|boss|family)\b"
)
_ZH_HOLDER_NOUNS = "姐姐|妹妹|哥哥|弟弟|父母|爸爸|妈妈|老婆|老公|妻子|丈夫|儿子|女儿|孩子|朋友|邻居|家人"
_HOLDERS_ZH = (
    rf"(?:^|(?<=[，,。；;：:！!？?\s])|(?<=我)|(?<=我的)|(?<=我们)|(?<=我家)|(?<=咱们))({_ZH_HOLDER_NOUNS})"
    rf"|({_ZH_HOLDER_NOUNS})(?=的)"
)

# Reported talk, reading or thought: what follows it, up to the end of the clause, names the
# topic of a conversation, an article or a thought, not a value anyone holds. "brought up" after
# was/were/been is "raised" ("I was brought up in Leeds"), a place.
_REPORTED = re.compile(
    r"(?:\b(?:talk|chat|think|thought|read|hear|heard|ask|wonder|argu|joke|complain|gossip|learn|rant|dream)\w*"
    r"|\b(?:podcast|article|story|stories|video|documentary|news|post|thread)s?)(?:\s+[\w'-]+){0,3}?\s+"
    r"(?:about|on the topic of)\b(?!\s+(?:to|\d|an? (?:hour|minute|day|week|month|year|mile|dozen)s?)\b)"
    r"|(?<!\bwas )(?<!\bwere )(?<!\bbeen )\b(?:brought|bring|brings|bringing)(?:\s+[\w'-]+)?\s+up\b"
    r"|\bdiscuss\w*\b"
    r"|聊[了到起]|谈[到起了]|说[起到]|提[到起]|讨论|在想|想了想|想起|问起|问我|关于",
    _I,
)
_CLAUSE_END = re.compile(
    r"[,;:.!?，。；：！？]|\b(?:and|but|so|because|since|though|although|then|while|whereas)\b|但是?|所以|不过|可是",
    _I,
)
# Undecided: the statement says that no value holds yet (unless a cue says what holds "for now").
_UNDECIDED = re.compile(
    r"\b(?:haven'?t|have not|hasn'?t|has not|not yet|still not|never)\s+(?:\w+\s+)?"
    r"(?:decided|made up (?:my|our) minds?|figured (?:it |that )?out|settled|picked(?! up)|chosen)\b"
    r"|\bundecided\b|\bnot sure(?: yet)?(?= about| whether| if|\W*$)|\bon the fence\b"
    r"|\bstill (?:deciding|weighing|considering|making up)\b|\bcan'?t decide\b"
    r"|还没(?:想好|决定|定|确定|考虑好|拿定主意|选好)|没想好|拿不定主意|不确定|犹豫|还在考虑|考虑中|没决定",
    _I,
)

_EPISODE = re.compile(
    r"\b(?:today|tonight|yesterday|last night|this (?:morning|afternoon|evening)|just now"
    r"|the whole weekend)\b"
    r"|今天|昨天|昨晚|今晚|刚才|整个周末",
    _I,
)
# A report of something that happened: a past-tense verb (English) or the perfective 了 (Chinese).
_PAST = re.compile(
    r"\b(?:[a-z]+[^e\W]ed|went|had|ate|bought|saw|met|took|made|got|gave|came|ran|swam|drank|spent|sat|"
    r"told|said|found|wrote|paid|won|lost|flew|drove|rode|caught|brought|taught|thought|felt|kept|slept|"
    r"heard|did|was|were|began|broke|chose|fell|forgot|grew|knew|sang|sent|spoke|stood|threw|woke|wore|"
    r"built|fought|held)\b"
    r"|[\u4e00-\u9fff]了",
    _I,
)
# A standing value: present tense, habit, preference, modality, request.
_STANDING = re.compile(
    r"\b(?:am|is|are|i'm|we're|you're|they're|it's|that's|there's|isn't|aren't|do|does|don't|doesn't|"
    r"have|has|haven't|want|wants|need|needs|prefer|prefers|like|likes|love|loves|hate|hates|enjoy|"
    r"enjoys|use|uses|live|lives|work|works|usually|always|often|normally|typically|generally|every|each|"
    r"should|would|i'd|will|i'll|won't|can|can't|could|must|please|rather|let's|favou?rite)\b"
    r"|是|喜欢|爱|想|要|需要|用|住|每|一般|通常|总是|经常|偏好|习惯|请|(?<![开例聚约机社晚])会(?!议)|能|可以|应该",
    _I,
)
_CUE_WORDS = re.compile(rf"{_STRONG_EN}|{_MILD}|{_ADDITIVE}", _I)
_TIME_WORD = re.compile(
    r"^\d|^(?:am|pm|next|last|week|weeks|month|months|year|years|today|tomorrow|tonight|yesterday|day|days"
    r"|morning|mornings|evening|evenings|afternoon|afternoons|night|nights|weekend|weekends|time|times)$"
    r"|^(?:今天|明天|昨天|昨晚|今晚|早上|上午|下午|晚上|周末|每天|每周|最近|现在|时候|时间)$"
)


@dataclass(frozen=True, slots=True)
class Statement:
    """What one statement is about (see the module docstring).

    ``names`` are the people and places it names inside the sentence; ``lead_names`` a name
    that opens it ("Anna retired; ..."), which may be a capitalised first word instead.
    ``items`` are the codes that name one thing ("LH825", "INV-3665"); ``reported`` and
    ``undecided`` say it states no value (see :attr:`states_value`).
    ``speaker`` is who says it when the text is a transcript line ("Gina: I love ..."): the
    label is not part of the statement, whose words are read from after it.
    ``opener`` is the name that opens it ("chen" in "Chen recommends ...") when it is news
    about others, not the user's own statement; else None.
    """

    text: str
    families: frozenset[str]
    holders: frozenset[str]
    topics: frozenset[str]
    strong_cues: tuple[str, ...]
    mild_cue: bool
    additive: bool
    negated: bool
    first_person: bool
    episode: bool
    past_report: bool
    standing: bool
    names: frozenset[str]
    values: frozenset[str]
    cjk: bool
    lead_names: frozenset[str]
    reported: bool = False
    undecided: bool = False
    items: frozenset[str] = frozenset()
    speaker: str | None = None
    opener: str | None = None
    scope: frozenset[str] = frozenset()

    @property
    def ids(self) -> frozenset[str]:
        """Numbers of two or more bare digits ("order 48221", "item 85"): they may name an item."""
        return frozenset(v for v in self.values if v.isdigit() and len(v) >= 2) | self.items

    @property
    def states_value(self) -> bool:
        """False for a report of talk or thought about a topic, and for an undecided statement.

        Neither says what holds: "we talked about remote work" leaves the user's way of
        working as it was, so it neither replaces nor casts doubt on another statement.
        """
        return not (self.reported or self.undecided)


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {name: re.compile(f"{en}|{zh}", _I) for name, (en, zh) in _FAMILIES.items()}


_STRONG = re.compile(f"{_STRONG_EN}|{_STRONG_ZH}", _I)
_MILD_RE = re.compile(_MILD, _I)
_ADDITIVE_RE = re.compile(_ADDITIVE, _I)
_NEGATION_RE = re.compile(_NEGATION, _I)
# Numbers, clock times and weekdays: the values a schedule or a quantity states.
_VALUE = re.compile(
    r"\d+(?:[:.,]\d+)*(?:\s?(?:am|pm|k))?|[零一二两三四五六七八九十百千万]+(?:点半?|点[一二三四五六七八九十]+分?)?"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|周[一二三四五六日天]|星期[一二三四五六日天]",
    _I,
)
_CALL_ME = re.compile(r"\bcall me\b|叫我", _I)
# A qualifier: up to two lowercase words after "for", "during", "when" or "if", or after "on",
# "at" or "in" opening a clause ("for urgent issues", "At home, ..."); "lunch was at the station" is a place.
_SCOPE = re.compile(
    r"(?:(?:^|[.,;:]\s*)(?i:on|at|in)|\b(?i:for|during|when|if))\s+((?:[a-z][\w'-]*\s*){1,2})"
)
# A code naming one item: letters then at least two digits ("LH825", "INV-3665", "A320").
_ITEM = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{1,4}-?\d{2,}[A-Za-z]?(?![A-Za-z0-9])")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|my|me|mine)\b|我", _I)
# A name that opens a sentence in the past tense: "Omar sold ...", "Nina booked ...".
_LEADING_NAME = re.compile(
    r"^\s*([A-Z][a-z]+)\s+(?:[a-z]+ed|sold|bought|lost|went|made|took|got|left|said|told|gave|found|sent"
    r"|kept|met|paid|won|ran|saw|came|brought|wrote|broke)\b"
)
# A capitalised name opening a sentence before a lowercase word: "Chen recommends", "Tom Becker wants".
_OPENER = re.compile(r"^\s*([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\s+[a-z]")
_HOLDER_RE = re.compile(f"{_HOLDERS_EN}|{_HOLDERS_ZH}", _I)
# Chinese function words that carry no topic on their own.
_ZH_FUNCTION = frozenset("我你他她的了是在都就也还要会给把被和跟吧呢啊吗个一这那有不别用去来")


@lru_cache(maxsize=1)
def _gate() -> LiteralGate:
    """The statement patterns, skipped on a text that has none of the literals a match needs."""
    return LiteralGate(
        [
            *_patterns().values(), _HOLDER_RE, _FIRST_PERSON, _LEADING_NAME, _REPORTED, _STRONG, _MILD_RE,
            _STANDING, _ADDITIVE_RE, _NEGATION_RE, _EPISODE, _PAST, _VALUE, _UNDECIDED, _ITEM, _CUE_WORDS,
            _CALL_ME, _SCOPE,
        ]
    )  # fmt: skip


@lru_cache(maxsize=16_384)  # a few thousand distinct words carry a chat; each statement stems its own
def _stem(token: str) -> str:
    """A crude English stem: "emailing"/"email", "moved"/"move", "groceries"/"grocery", "shopping"/"shop"."""
    if contains_cjk(token):
        return token
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(token) > len(suffix) + 2 and token.endswith(suffix):
            token = token[: -len(suffix)]
            if len(token) > 3 and token[-1] == token[-2]:
                token = token[:-1]  # shopp -> shop
            break
    return token[:-1] if len(token) > 3 and token.endswith("e") else token


def _topics(text: GatedText) -> frozenset[str]:
    """Content words that are not cues, times or function words, stemmed."""
    cleaned = text.sub(_CUE_WORDS, " ")
    cjk = contains_cjk(cleaned)  # no token of a text without CJK has any
    out: set[str] = set()
    for token in tokenize(cleaned):
        if token in STOPWORDS or token in _ZH_FUNCTION or _TIME_WORD.match(token):
            continue
        if len(token) < (2 if cjk and contains_cjk(token) else 3):
            continue
        out.add(_stem(token))
    return frozenset(out)


def _scope(text: GatedText, values: frozenset[str]) -> frozenset[str]:
    """The content words of the statement's qualifiers (see :func:`two_scopes`), stemmed."""
    words = (w for m in text.finditer(_SCOPE) for w in tokenize(m.group(1)))
    return frozenset(
        _stem(w) for w in words if w not in STOPWORDS and w not in values and not _TIME_WORD.match(w)
    )


def analyse(text: str) -> Statement:
    """The families, holders, topic words and cues of one statement.

    A transcript line's speaker label is set apart
    (:func:`~dreammem.text.speakers.speaker_label`): "Jon:" opening every line of Jon's
    is neither a topic word nor a name the line is about.
    """
    speaker, body = speaker_label(text)
    statement = _analyse(body)
    return statement if speaker is None else dataclasses.replace(statement, text=text, speaker=speaker)


def _analyse(text: str) -> Statement:
    gated = _gate().view(text)
    families = frozenset(name for name, pattern in _patterns().items() if gated.search(pattern))
    # "Call me Bob" gives a name, "call me instead of emailing" a channel: never both.
    families -= {"contact"} if states_name(text) else {"name"} if gated.search(_CALL_ME) else set()
    holders = frozenset(
        next((g for g in m.groups() if g), "").lower().rstrip("s") for m in gated.finditer(_HOLDER_RE)
    )
    first_person = bool(gated.search(_FIRST_PERSON))
    names_found = [
        (e.key, text.lstrip().startswith(e.text)) for e in extract_entities(text) if e.kind == "name"
    ]
    lead_names = frozenset(k for k, lead in names_found if lead)
    if not first_person and not holders:
        # "Omar sold the guitar": news about a named person, whose attributes are theirs.
        lead = gated.match(_LEADING_NAME)
        if lead and lead.group(1).lower() in lead_names:
            holders = frozenset({lead.group(1).lower()})
    opened = None if first_person else _OPENER.match(text)
    opener = opened.group(1).lower() if opened else None
    # Cues, tense and negation are read outside a reported topic ("thinking about the new chairs").
    told_text = _without_reported(gated)
    told = gated if told_text == text else _gate().view(told_text)
    strong_cues = tuple(m.group(0).lower() for m in told.finditer(_STRONG))
    mild_cue = bool(told.search(_MILD_RE))
    standing = bool(told.search(_STANDING))
    reported = told_text != text and not (strong_cues or mild_cue or standing)
    return Statement(
        text=text,
        families=families,
        holders=holders - {""},
        topics=_topics(gated),
        strong_cues=strong_cues,
        mild_cue=mild_cue,
        additive=bool(gated.search(_ADDITIVE_RE)),
        negated=bool(told.search(_NEGATION_RE)),
        first_person=first_person,
        episode=bool(gated.search(_EPISODE)),
        past_report=not (strong_cues or mild_cue or standing) and bool(gated.search(_PAST)),
        standing=standing,
        names=frozenset(k for k, lead in names_found if not lead),
        values=(values := frozenset(m.group(0).lower().replace(" ", "") for m in gated.finditer(_VALUE))),
        cjk=contains_cjk(text),
        lead_names=lead_names,
        reported=reported,
        undecided=not (strong_cues or mild_cue) and bool(gated.search(_UNDECIDED)),
        items=frozenset(m.group(0).upper().replace("-", "") for m in gated.finditer(_ITEM)),
        opener=opener if opener in lead_names else None,
        scope=_scope(told, values),
    )


def _without_reported(gated: GatedText) -> str:
    """The text with each reported topic (a report's words up to the end of its clause) blanked out."""
    text = gated.text
    out, last = [], 0
    for match in gated.finditer(_REPORTED):
        if match.start() < last or not text[: match.start()].strip():
            continue  # one that opens the statement asks ("Ask me about the budget first") or leads in
        end = _CLAUSE_END.search(text, match.end())
        stop = end.start() if end else len(text)
        out += [text[last : match.start()], " "]
        last = stop
    return "".join(out) + text[last:] if out else text
