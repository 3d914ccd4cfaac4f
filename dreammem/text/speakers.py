"""Speaker labels of transcript lines ("Gina: I love ...", "小王：今天...").

A memory written from a multi-speaker transcript (a group chat, meeting notes, a
conversation log) often opens with who said it. The label is not part of what is said:
the write path reads the statement after it, and the speaker recall path uses it as the
line's person ("what does Gina like?" asks about Gina's own lines).

Two forms are read: one or two capitalised words ("Gina", "Mary Ann") before a colon
and a space, or a full-width colon ("Gina：..."); and a Chinese name of two to four
characters before either colon ("小王：...", "欧阳娜娜: ..."). Header words ("Note:",
"更正：", "星期一：") are not speakers, nor is reported speech ("他说：...": a label
does not end in a verb of saying).
"""

from __future__ import annotations

import re

from dreammem.text.short_cache import short_text_cache
from dreammem.text.vocabulary import MONTHS, WEEKDAYS, ZH_WEEKDAYS

__all__ = ["speaker_label"]

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One or two capitalised words, then ": " or "：" ("Gina: ...", "Mary Ann：..."); or two to four
# Chinese characters, then either colon ("小王：...", "小王: ...").
_SPEAKER = re.compile(
    rf"^\s*(?:([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?)(?::\s+|：\s*)|([{_HAN}]{{2,4}})[:：]\s*)(?=\S)"
)
# Words that head a line without naming a speaker.
_NOT_SPEAKERS = frozenset(WEEKDAYS + MONTHS + ZH_WEEKDAYS) | frozenset(
    "note notes update updates correction reminder fyi ps re edit todo important warning question answer "
    "summary status btw also tip tips heads info news today tomorrow yesterday tonight "
    "step goal plan agenda subject topic result results "
    # Chinese headers: notes, corrections, questions, days and times, plans, places and contacts
    "注意 备注 附注 注释 说明 更新 更正 纠正 修正 提醒 提示 重要 警告 问题 回答 答案 答复 总结 小结 结论 "
    "结果 原因 理由 状态 进度 补充 顺便 另外 新闻 消息 通知 公告 今天 明天 昨天 后天 前天 今晚 今早 "
    "步骤 目标 计划 议程 主题 话题 标题 内容 地址 地点 时间 日期 电话 邮箱 价格 费用 待办 任务".split()
)
# A Chinese label ending in a verb of saying is reported speech ("他说：", "妈妈问：", "多次提到：").
_SAYING = re.compile("(?:说|道|问|讲|答|称|喊|叫|写|提到|表示|认为|觉得|指出|强调|回复)$")


@short_text_cache
def speaker_label(text: str) -> tuple[str | None, str]:
    """The speaker of a transcript line (casefolded) and the words after the label.

    Header words ("Correction: ...", "Note: ...", "更正：...") and reported speech
    ("他说：...") are not speakers. Without a label: ``(None, text)``. Cached for short
    lines (:mod:`dreammem.text.short_cache`): a recall asks it of the same candidates on
    several paths, and the same turns come back query after query.
    """
    m = _SPEAKER.match(text)
    if m is None:
        return None, text
    name = m.group(1) or m.group(2)
    if name.casefold() in _NOT_SPEAKERS or (m.group(2) is not None and _SAYING.search(name)):
        return None, text
    return name.casefold(), text[m.end() :]
