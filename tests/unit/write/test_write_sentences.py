"""Updates between paragraphs, decided sentence by sentence (real store, real models).

A long turn is never superseded: when one of its sentences is replaced by a sentence of a
later turn of another session, it is marked possibly outdated, the newer turn ranks first in
recall and the reason names both sentences. The texts were written for these tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.embed import NumpyBertEmbedder
from dreammem.embed.models import E5Embedder
from dreammem.types import MemoryRecord, Role, Status
from dreammem.write.relations import OUTDATED_WHY_KEY, possibly_outdated_by
from dreammem.write.resolve import is_compact
from dreammem.write.sentences import SENTENCE_UPDATE, sentence_update, split_sentences, value_sentences
from dreammem.write.statements import analyse

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)

BIKE_OLD = (
    "I ride my road bike to the office every day, about twelve miles each way. The route along "
    "the river is flat and quiet in the morning. Do you know a good way to keep my bike clean in the rain?"
)
BIKE_NEW = (
    "I actually switched to riding my electric bike to the office every day since my knee started "
    "hurting. The river route is still my favourite in the morning. Any advice on keeping my bike dry "
    "in the rain?"
)
BAKING = (
    "I'm baking sourdough this weekend and the starter smells great. My kitchen scale broke, so I "
    "measure the flour with cups. How long should the dough rise before baking?"
)
ZH_OLD = "我每天骑自行车去公司上班，单程二十公里。早上路上车不多，骑起来很舒服。下雨天怎么保持自行车干净？"
ZH_NEW = (
    "我现在改成骑电动自行车去公司上班了，因为膝盖有点疼。早上路上车还是不多，骑起来很轻松。"
    "下雨天怎么保持自行车干燥？"
)


@pytest.fixture
def english(minilm: NumpyBertEmbedder) -> Iterator[DreamMemory]:
    with DreamMemory(None, embedder=minilm) as memory:
        yield memory


def _turns(
    memory: DreamMemory, old: str, new: str, *, same_session: bool = False
) -> tuple[MemoryRecord, MemoryRecord]:
    memory.add(old, user_id="u1", event_time=T0, session_id="s1")
    memory.add(
        "Glad to help!", user_id="u1", role="assistant", event_time=T0 + timedelta(minutes=1), session_id="s1"
    )
    later = T0 + (timedelta(minutes=5) if same_session else timedelta(days=7))
    memory.add(new, user_id="u1", event_time=later, session_id="s1" if same_session else "s2")
    records = memory.get_all(user_id="u1", status=None, limit=100)
    return (
        next(r for r in records if r.content == old and r.role is Role.USER),
        next(r for r in records if r.content == new and r.role is Role.USER),
    )


def test_the_test_texts_are_paragraphs() -> None:
    assert not any(map(is_compact, [BIKE_OLD, BIKE_NEW, BAKING, ZH_OLD, ZH_NEW]))


def test_a_paragraph_whose_sentence_changes_is_marked_not_superseded(english: DreamMemory) -> None:
    old, new = _turns(english, BIKE_OLD, BIKE_NEW)
    assert old.status is Status.ACTIVE and new.status is Status.ACTIVE
    assert possibly_outdated_by(old) == (new.id,)
    why = old.system[OUTDATED_WHY_KEY][new.id]
    assert why["rule"] == SENTENCE_UPDATE
    assert "I actually switched to riding my electric bike" in why["reason"]
    assert "I ride my road bike to the office every day" in why["reason"]
    # The newer paragraph leads, the older one is shown marked (its other facts stay recallable).
    hits = english.recall("How do I ride to work?", user_id="u1", k=5)
    ids = [h.record.id for h in hits]
    assert ids.index(new.id) < ids.index(old.id)
    assert next(h for h in hits if h.record.id == old.id).outdated_by == (new.id,)
    # history() of the older paragraph carries the mark and its reason (a field, never the content).
    shown = next(r for r in english.history(old.id, user_id="u1") if r.id == old.id)
    assert shown.system[OUTDATED_WHY_KEY][new.id]["rule"] == SENTENCE_UPDATE


def test_an_unrelated_later_paragraph_marks_nothing(english: DreamMemory) -> None:
    old, new = _turns(english, BIKE_OLD, BAKING)
    assert possibly_outdated_by(old) == () and possibly_outdated_by(new) == ()


def test_a_paragraph_of_the_same_session_goes_on_and_marks_nothing(english: DreamMemory) -> None:
    old, _ = _turns(english, BIKE_OLD, BIKE_NEW, same_session=True)
    assert old.is_active and possibly_outdated_by(old) == ()


def test_a_chinese_paragraph_is_marked_too() -> None:
    with DreamMemory(None, embedder=E5Embedder()) as memory:
        old, new = _turns(memory, ZH_OLD, ZH_NEW)
    assert old.is_active and possibly_outdated_by(old) == (new.id,)
    reason = old.system[OUTDATED_WHY_KEY][new.id]["reason"]
    assert "我现在改成骑电动自行车去公司上班了" in reason


def test_a_question_sentence_is_never_compared() -> None:
    sentences = split_sentences(BIKE_OLD)
    assert len(sentences) == 3 and sentences[-1].endswith("?")
    compared = {s.text for s in value_sentences(BIKE_OLD)}
    assert sentences[0] in compared and sentences[-1] not in compared


def test_sentences_need_the_same_subject_by_meaning_and_three_shared_words() -> None:
    assert sentence_update(BIKE_NEW, BIKE_OLD, 0.7, related=True) is not None
    assert sentence_update(BIKE_NEW, BIKE_OLD, 0.3, related=False) is None
    # Fewer than three shared words ("bike") are not enough, even with a change cue.
    lone = "I'm looking at bike lights today. Yesterday I switched to a new bike lock from the shop downtown."
    assert sentence_update(lone, BIKE_OLD, 0.7, related=True) is None
    assert analyse(lone).strong_cues
