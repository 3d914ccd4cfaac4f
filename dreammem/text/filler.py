"""Filler: turns that say nothing worth remembering, in English and Chinese.

A turn is filler when nothing is left of it once acknowledgements ("Got it.",
"Noted.", "收到"), thanks, greetings and goodbyes, interjections, small talk about
the weather or the day ("The weather is nice today", "今天天气真不错"), politeness and
function words are taken out; or when it repeats one word ("text text text"). A
number, a name, an amount or any other content word keeps a turn: "ok, order #48213
ships Monday" and "thanks Tom" are not filler.

A tool echo is DreamMem's own tool output fed back as a message ("Saved memory
<id>.", a memory search result, "No memories found.").

Filler and tool echoes stay in the episodic log (the transcript is what it is) but
never become recall hits, and the dream archives them instead of summarising them.
"""

from __future__ import annotations

import re
import unicodedata

from dreammem.text.tokenize import STOPWORDS, tokenize

__all__ = ["is_filler", "is_tool_echo"]

_MAX_CHARS = 240
"""Longer text is never filler by vocabulary (small talk is short); repetition still is."""

_EN_WORDS = frozenset(
    """
    ok okay okey okie k kk alright allright right sure yes yeah yea yep yup ya yah aye no nope nah
    fine good great cool nice awesome perfect excellent wonderful lovely brilliant fantastic
    amazing neat sweet super gotcha understood understand noted acknowledged ack roger copy
    clear makes make sense sounds sound agreed agree deal done correct exactly indeed absolutely
    definitely certainly totally true fair enough course
    thanks thank thx tks ty tysm cheers appreciate appreciated much lot lots welcome np problem
    problems worries worry prob
    hi hello hey hiya howdy yo greetings morning afternoon evening night goodnight bye goodbye
    see later soon cya ttyl care meet meeting nice glad happy pleased
    oh ah uh um umm hmm hm huh wow whoa haha hahaha lol lmao hehe heh ha yay ooh aha oops
    well let know keep posted go ahead carry please pls plz help hope
    weather day days today tonight tomorrow lovely sunny rainy rain raining cloudy windy cold
    hot warm chilly beautiful outside going doing been is are was
    check look moment wait sec bit weekend funny interesting works take catch talk speak
    chat mind letting thing stuff lets dokie doke righto kindly bunch ton tons one again set
    anyway anyways
    """.split()
)
"""English acknowledgement, greeting, thanks, interjection and small-talk words."""

_ZH_PHRASES = tuple(
    sorted(
        """
        好的 好滴 好嘞 好吧 好啊 好呀 好 行 可以 没问题 没事 没关系 不客气 客气 收到 明白 了解 知道 懂 清楚
        对 是的 没错 当然 确实 嗯嗯 嗯 哦 噢 喔 啊 呀 啦 哈哈 哈 嘿嘿 嘿 呵呵 呵 哇 耶 嘛 呗 咯 喽
        谢谢 谢啦 谢了 多谢 感谢 辛苦 麻烦 你好 您好 大家好 嗨 哈喽 早上好 早安 早 下午好 晚上好 晚安
        再见 拜拜 回见 回头见 下次见 明天见 见 今天 明天 天气 真 挺 很 非常 不错 挺好 真好
        好热 好冷 太热 太冷 下雨 晴天 阴天 出太阳 外面
        继续 稍等 马上 这就 立刻 请 一下 哒 滴 咧 了 的 吧 呢 吗 么 我 你 您 他 她 它 们
        这样 那样 这 那 就 也 都 还 太 棒 厉害 赞
        """.split(),
        key=len,
        reverse=True,
    )
)
"""Chinese filler phrases, removed longest first before the rest is tokenised."""
_ZH_FILLER = re.compile("|".join(map(re.escape, _ZH_PHRASES)))

_SAVED = re.compile(r"^(?:saved|forgot) memory [0-9a-f]{32}\.?$", re.IGNORECASE)
_SEARCH_LINE = re.compile(r"^\[[0-9a-f]{32}\] (?:\[[^\]]*\] )?\(\d{4}-\d{2}-\d{2}[^)]*\) ")
_NO_MEMORIES = "no memories found."


def _words(text: str) -> list[str]:
    # "isn't" -> "isn", "t": contractions split into their (stopword) parts.
    return [p for w in tokenize(unicodedata.normalize("NFKC", text)) for p in w.split("'") if p]


def _repeats_one_word(words: list[str]) -> bool:
    """Several words, one distinct ("text text text", "blah blah"); numbers excepted."""
    return len(words) >= 2 and len(set(words)) == 1 and not words[0].isdigit()


def is_filler(text: str) -> bool:
    """True when the text holds nothing but acknowledgement, greeting, thanks or small talk.

    Emoji- or punctuation-only text is filler too; any digit, name or other content
    word makes it not filler.
    """
    words = _words(text)
    if _repeats_one_word(words):
        return True
    if len(text) > _MAX_CHARS or any(map(str.isdigit, text)):
        return False
    rest = _ZH_FILLER.sub(" ", unicodedata.normalize("NFKC", text))
    return all(w in STOPWORDS or w in _EN_WORDS for w in _words(rest))


def is_tool_echo(text: str) -> bool:
    """True for DreamMem's own tool output: a save or forget receipt, or a memory search result."""
    stripped = text.strip()
    if _SAVED.match(stripped) or stripped.casefold() == _NO_MEMORIES:
        return True
    lines = [line for line in stripped.splitlines() if line.strip()]
    return bool(lines) and all(_SEARCH_LINE.match(line) for line in lines)
