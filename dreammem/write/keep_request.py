"""Does a user turn ask the assistant to keep something? ("remember that ...", "记住 ...").

A request to remember pins a core memory; the word "remember" alone does not. The test
reads the *shape* of each sentence rather than a list of phrasings:

1. **the memory verb is an order**: it opens its clause (after an interjection such as
   "ok," / "hey,", "please", "do", or a polite "can / could / would you"; in Chinese
   after 请 / 你 / 帮我 / 麻烦 / 一定要): "I remember ...", "Do you remember ...?",
   "我永远记得 ..." have a subject of their own and are recollections;
2. **a question is a recollection** ("Remember this photo?", "还记得 ... 吗？") unless it is
   the polite form of a request ("Could you keep in mind that ...?", "能帮我记住 ... 吗");
3. **what follows the verb is information**, not a thing or an errand:

   * a colon or a comma, "this:" or "the following" ("Remember: ...", "记住，...");
   * a clause about the user ("that I ...", "my ...", "I ...", "我 ...", "我的 ...");
   * "that" + a clause that does not read as a question ("remember that the gate code
     is 4411");
   * "to remind / tell me" (a request to the assistant to bring something back).

   A definite thing ("the project", "this photo", "that concert", "这张照片") is a
   recollection; "to" + any other verb ("Don't forget to take pictures!", "记得带伞",
   "别忘了拍照") is an errand for whoever listens, not something to keep;
4. **the information is about something particular**, not a saying: it speaks of the
   user ("I", "my", "我"), or names a particular thing, person, number or time (a digit,
   an email or URL, a capitalised word inside the clause, a proper or time noun of
   jieba's tagger, a time expression). "Remember, practice makes perfect", "Remember, the
   most important thing is to have fun", "记住，熟能生巧" state something true of
   everyone: advice, not a request to keep. "Remember: always send invoices to
   billing@example.com" names a particular address and pins.
"""

from __future__ import annotations

import re

from dreammem.dates.parse import mentions_time
from dreammem.quiet import quiet_jieba
from dreammem.text.entities import KEY_KINDS, extract_entities

__all__ = ["asks_to_keep"]

_I = re.IGNORECASE
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
"""Where a sentence ends: a full stop before a space or the end ("billing@example.com." is one)."""
_EN = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|hey|oh|so|and|also|but|well|now|btw|plus|hi)\b\W*)*"
    r"(?P<polite>please\s+|do\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?|)"
    r"(?:remember|(?:don'?t|do\s+not|never)\s+forget|keep\s+in\s+mind|(?:make|take)\s+a\s+note(?:\s+of)?"
    r"|note(?:\s+down)?|write\s+down|memori[sz]e)\b"
    r"(?P<rest>.*)$",
    _I | re.DOTALL,
)
_EN_INFO = re.compile(
    r"^\s*(?:(?:this|it|for\s+(?:later|the\s+future|me))\s*)*[:,;-]"
    r"|^\s*(?:this|the\s+following)\s*[:,]?\s*$|^\s*the\s+following\b"
    r"|^\s*(?:that\s+)?(?:i|i'?m|i'?ve|i'?ll|i'?d|my|mine|we|we'?re|our|me)\b"
    r"|^\s*to\s+(?:remind|tell|ask|ping|notify|alert|let)\s+me\b",
    _I,
)
_EN_THAT_CLAUSE = re.compile(r"^\s*that\s+(?!(?:one|time|day|night|trip|place)\b)\w+", _I)
_ZH = re.compile(
    r"^[\s，,。！!]*(?P<polite>(?:请|你|您|帮我|麻烦你?|一定要|务必|能不能|能|可以|可不可以)*)"
    r"(?:记住|记下来?|记一下|记着|记好|牢记|(?:别|不要)忘(?:了|记)|记得)"
    r"(?P<rest>.*)$",
    re.DOTALL,
)
_ZH_INFO = re.compile(r"^[了下来]?\s*(?:这个|这些|以下)?\s*[:：，,、]|^\s*(?:我|我的|我们)")
_ZH_RECALL = re.compile(r"还记得|记不记得|记得不记得")
_EN_SELF = re.compile(r"\b(?:i|i'?m|i'?ve|i'?ll|i'?d|me|my|mine|myself|we|we'?re|us|our|ours)\b", _I)
_EN_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_PARTICULAR = re.compile(r"\d|[A-Za-z]{2}")  # a number; in Chinese text, a Latin name or code
_ZH_PARTICULAR_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "t", "eng"})
"""jieba's tags of a person, place, organisation or other proper name, and of a time word (one
character alone is too often mistagged: "平安是福" tags 福 a place)."""


def _particular(rest: str) -> bool:
    """Whether the text names something particular (rule 4 of the module docstring)."""
    if mentions_time(rest) or any(e.kind in KEY_KINDS for e in extract_entities(rest)):
        return True
    if re.search(r"[\u4e00-\u9fff]", rest):
        quiet_jieba()
        from jieba import posseg  # noqa: PLC0415 - jieba loads its dictionary: only for Chinese text

        return (
            "我" in rest
            or "咱" in rest
            or bool(_PARTICULAR.search(rest))
            or any(pair.flag in _ZH_PARTICULAR_TAGS and len(pair.word) > 1 for pair in posseg.cut(rest))
        )
    if _EN_SELF.search(rest) or re.search(r"\d", rest):
        return True
    # A capital inside the clause marks a name ("cc Maria", "in Spanish", "every Monday");
    # the clause's first word is capitalised by its position alone.
    return any(w[0].isupper() for w in _EN_WORD.findall(rest)[1:] if not _EN_SELF.fullmatch(w))


def _question(sentence: str) -> bool:
    stripped = sentence.strip()
    return stripped.endswith(("?", "？")) or bool(re.search(r"[吗呢么][\s。.!！?？]*$", stripped))


def _english(sentence: str) -> bool:
    found = _EN.match(sentence)
    if found is None:
        return False
    polite = found.group("polite").strip().casefold()
    if _question(sentence) and not polite.endswith("you"):
        return False
    rest = found.group("rest")
    shaped = bool(_EN_INFO.match(rest)) or (bool(_EN_THAT_CLAUSE.match(rest)) and not _question(sentence))
    return shaped and _particular(rest)


def _chinese(sentence: str) -> bool:
    if _ZH_RECALL.search(sentence):
        return False
    found = _ZH.match(sentence)
    if found is None:
        return False
    polite = found.group("polite")
    if _question(sentence) and not any(w in polite for w in ("帮我", "能", "可以")):
        return False
    rest = found.group("rest")
    return bool(_ZH_INFO.match(rest)) and _particular(rest)


def asks_to_keep(text: str) -> bool:
    """True when some sentence of the text asks the assistant to keep something (module docstring)."""
    return any(_english(s) or _chinese(s) for s in _SENTENCE_END.split(text) if s.strip())
