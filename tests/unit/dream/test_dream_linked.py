"""The dream keeps update links intact: linked records stay verbatim, patterns join only repeats.

Real models (MiniLM for English, multilingual-e5 for Chinese) and real SQLite; the LLM
is a recording fake. The phrasings here are not the update benchmark's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.config import DreamConfig
from dreammem.dream.context import DreamContext
from dreammem.dream.distill import distill
from dreammem.dream.linked import KEPT_WHY_KEY, linked_ids
from dreammem.dream.llm_calls import LLMBudget, StructuredLLM, read_prompt
from dreammem.dream.patterns import cluster_observations
from dreammem.dream.score import Scored
from dreammem.embed.models import E5Embedder
from dreammem.types import MemoryRecord, Priority, Role, Status
from dreammem.write.relations import OUTDATED_BY_KEY, possibly_outdated_by, possibly_outdates
from tests.marks import mark_outdated

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def rec(text: str, n: int, **kw: Any) -> MemoryRecord:
    return MemoryRecord(
        user_id="u",
        content=text,
        role=Role.USER,
        session_id="s1",
        priority=Priority.HIGH,
        event_time=T0 + timedelta(minutes=n),
        **kw,
    )


def run(items: list[Scored], embed: Any, *, llm: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
    return distill(
        items,
        history=kw.get("history", []),
        twins={},
        embed=embed,
        config=DreamConfig(),
        llm=StructuredLLM(llm, LLMBudget(12, 100_000)) if llm is not None else None,
        context=DreamContext(),
        now=T0 + timedelta(days=1),
        dream_id="d1",
        linked=kw.get("linked", frozenset()),
    )


def test_e5_close_statements_without_a_shared_topic_word_are_no_pattern(e5: E5Embedder) -> None:
    dentist, piano = rec("我的牙医是王医生。", 0), rec("我晚上喜欢弹钢琴。", 1)
    vectors = e5.embed_documents([dentist.content, piano.content])
    config = DreamConfig()
    # e5 puts these two unrelated statements above the pattern threshold ...
    assert float(vectors[0] @ vectors[1]) >= config.pattern_similarity
    # ... so only the missing topic word keeps them apart.
    groups = cluster_observations([dentist, piano], e5.embed_documents, config.pattern_similarity)
    assert [[r.id for r in g] for g in groups] == [[dentist.id], [piano.id]]
    plan = run([Scored(dentist, 4, "rules", ""), Scored(piano, 4, "rules", "")], e5.embed_documents)
    assert plan.patterns == []
    swim = [rec("我每周三去游泳。", 2), rec("每周三我都去游泳。", 3)]
    joined = cluster_observations(swim, e5.embed_documents, config.pattern_similarity)
    assert [len(g) for g in joined] == [2]  # a real repeat shares its topic word


class PatternLLM:
    """Phrases each pattern from its last observation and records what it was shown."""

    def __init__(self) -> None:
        self.shown: list[list[str]] = []

    def __call__(self, prompt: str) -> str:
        task, payload = read_prompt(prompt)
        assert task == "patterns"
        out = []
        for group in payload["groups"]:
            self.shown.append(group["observations"])
            out.append({"id": group["id"], "pattern": "Says: " + group["observations"][-1]})
        return json.dumps({"patterns": out})


def test_a_superseded_old_value_is_no_support_and_never_the_patterns_words(e5: E5Embedder) -> None:
    old = rec("I cycle to work every day.", 0, status=Status.SUPERSEDED)  # changed, not restated
    said = [rec("I take the tram to work these days.", 5), rec("I take the tram to work these days!", 6)]
    vectors = e5.embed_documents([old.content, said[0].content])
    assert float(vectors[0] @ vectors[1]) >= DreamConfig().pattern_similarity  # close, and shares "work"
    restated = rec("I take the tram to work these days", 3, status=Status.SUPERSEDED)
    llm = PatternLLM()
    items = [Scored(r, 4, "rules", "") for r in said]
    plan = run(items, e5.embed_documents, llm=llm, history=[old, restated])
    (pattern,) = plan.patterns
    assert [r.id for r in pattern.sources] == [restated.id, *(r.id for r in said)]
    assert pattern.record.system["support"] == 3
    assert pattern.replaces == tuple(said)
    assert "cycle" not in pattern.record.content
    assert all(old.content not in shown for shown in llm.shown)
    assert all(restated.content not in shown for shown in llm.shown)


def test_a_marked_observation_stays_out_of_patterns(e5: E5Embedder) -> None:
    newer = rec("I take the tram to work these days.", 5)
    marked = rec("I take the tram to work these days", 0, system={OUTDATED_BY_KEY: [newer.id]})
    plan = run([Scored(marked, 4, "rules", ""), Scored(newer, 4, "rules", "")], e5.embed_documents)
    assert plan.patterns == []


def test_linked_records_are_kept_and_short_records_summarised_whole(e5: E5Embedder) -> None:
    chat = rec("The weather turned cold this week.", 0)
    changed = rec("I quit the morning run; evenings I cycle now.", 1)
    newer = rec("My sister lives in Lyon these days.", 2)
    items = [Scored(r, 3, "rules", "user input") for r in (chat, changed, newer)]
    plan = run(items, e5.embed_documents, linked=frozenset({newer.id}))
    assert [s.record.id for s in plan.kept] == [newer.id]
    assert plan.held[newer.id]
    (summary,) = plan.summaries
    assert summary.record.content == (
        "user: The weather turned cold this week.; user: I quit the morning run; evenings I cycle now."
    )


@pytest.fixture
def memory(tmp_path: Path, minilm) -> Iterator[DreamMemory]:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path / "store", embedder=minilm) as m:
        yield m


def _write(memory: DreamMemory, turns: list[tuple[str, str]], user: str = "u") -> list[MemoryRecord]:
    items = [
        {"content": c, "role": r, "user_id": user, "session_id": "s", "event_time": T0 + timedelta(hours=i)}
        for i, (c, r) in enumerate(turns)
    ]
    return memory.add_many(items)


def test_a_dream_keeps_the_newer_value_verbatim_and_says_why(memory: DreamMemory) -> None:
    turns = [
        ("I usually do my laundry on Sundays.", "user"),
        ("Thanks!", "assistant"),
        ("It rained all day here.", "user"),
        ("Laundry day is Wednesday now.", "user"),
        ("My cousin visited on Friday.", "user"),
    ]
    written = _write(memory, turns)
    old, new = written[0], written[3]
    assert memory.store.get("u", [old.id])[0].superseded_by == new.id  # the write path linked them
    report = memory.dream(user_id="u", now=T0 + timedelta(days=1))
    assert new.id in report.kept
    assert all(new.id not in d.sources for d in report.distilled)
    (stored,) = memory.store.get("u", [new.id])
    assert stored.is_active and stored.system[KEPT_WHY_KEY]
    hits = memory.recall("Which day do I do laundry?", user_id="u", k=3, now=T0 + timedelta(days=1)).hits
    assert new.id in [h.record.id for h in hits]
    assert all("Sundays" not in h.record.content for h in hits)
    memory.undo_dream(report.dream_id, user_id="u")
    assert KEPT_WHY_KEY not in memory.store.get("u", [new.id])[0].system


def _marked(memory: DreamMemory, newer_id: str, content: str, **fields: Any) -> MemoryRecord:
    """A new memory the write path marked as possibly outdated by ``newer_id``."""
    return mark_outdated(memory, memory.add(content, **fields), newer_id)


def test_linked_ids_follow_marks_and_supersedes_of_this_user_only(memory: DreamMemory) -> None:
    newer = memory.add(
        "Lately I prefer the Corner Bean cafe.", user_id="u", event_time=T0 + timedelta(hours=2)
    )
    older = _marked(memory, newer.id, "My favourite cafe is Blue Door.", user_id="u", event_time=T0)
    other = memory.add("Lately I prefer the Corner Bean cafe.", user_id="v", event_time=T0)
    queued = memory.store.queued("u")
    assert linked_ids(memory.store, "u", queued) >= {older.id, newer.id}
    assert other.id not in linked_ids(memory.store, "u", queued)
    unmarked = [r for r in queued if r.id != older.id]
    assert linked_ids(memory.store, "u", unmarked) == frozenset()


def test_a_mark_between_chatter_lines_links_nothing(memory: DreamMemory) -> None:
    # A store written before the write path stopped marking chit-chat may still hold such a mark.
    newer = memory.add(
        "My brother and I talked about the new ferry schedule.",
        user_id="u",
        event_time=T0 + timedelta(hours=2),
    )
    at = {"user_id": "u", "event_time": T0}
    older = _marked(memory, newer.id, "The ferry crew brought up the harbour festival.", **at)
    undecided = _marked(memory, newer.id, "露营的地方还没想好。", **at)
    queued = memory.store.queued("u")
    assert linked_ids(memory.store, "u", queued) == frozenset()
    # A value marked by a report of talk keeps nothing either; a value marked by a value does.
    value = _marked(memory, newer.id, "I take the 7:40 ferry on weekdays.", **at)
    assert linked_ids(memory.store, "u", memory.store.queued("u")) == frozenset()
    later = memory.add("These days I take the 8:10 ferry.", user_id="u", event_time=T0 + timedelta(hours=3))
    marked = _marked(memory, later.id, "I ride the 6:55 ferry most mornings.", **at)
    assert linked_ids(memory.store, "u", memory.store.queued("u")) == {marked.id, later.id}
    assert not {older.id, undecided.id, value.id} & linked_ids(memory.store, "u", memory.store.queued("u"))


def test_a_mark_set_after_an_earlier_dream_still_keeps_the_newer_value_whole(memory: DreamMemory) -> None:
    # Dream 1 keeps the older value (its semantic record); the newer one, written after it and
    # only marking it, is queued for dream 2 among chit-chat, and must not sink into a summary.
    memory.add("I want replies as long, thorough essays.", user_id="u", event_time=T0)
    memory.add("The heating clanked all night.", user_id="u", event_time=T0 + timedelta(minutes=5))
    memory.dream(user_id="u", now=T0 + timedelta(hours=1))
    newer = memory.add("Keep replies brief, a few bullets.", user_id="u", event_time=T0 + timedelta(days=1))
    (older,) = [r for r in memory.get_all(user_id="u") if possibly_outdated_by(r) == (newer.id,)]
    assert possibly_outdates(memory.store.get("u", [newer.id])[0]) == (older.id,)
    chatter = [
        "We ordered dumplings.",
        "The tram was packed.",
        "I repotted the fern.",
        "A friend phoned late.",
    ]
    for i, text in enumerate(chatter):
        memory.add(text, user_id="u", event_time=T0 + timedelta(days=1, minutes=i + 1))
    assert linked_ids(memory.store, "u", memory.store.queued("u")) == {newer.id}
    report = memory.dream(user_id="u", now=T0 + timedelta(days=2))
    assert newer.id in report.kept
    assert memory.store.get("u", [newer.id])[0].is_active
    hits = memory.recall("How should replies be written?", user_id="u", k=3, now=T0 + timedelta(days=2)).hits
    order = [h.record.id for h in hits]
    assert order.index(newer.id) < order.index(older.id)
    assert next(h for h in hits if h.record.id == older.id).outdated_by == (newer.id,)
