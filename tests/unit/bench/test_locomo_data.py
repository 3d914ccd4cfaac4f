"""Loading LoCoMo-shaped data: sessions, times, captions, evidence clean-up, bad files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dreammem.errors import ValidationError
from dreammem_bench.locomo import load_locomo, normalize_evidence, parse_conversation, parse_session_time
from dreammem_bench.pairs import locomo_query_groups

FIXTURE = Path(__file__).parents[2] / "fixtures" / "locomo_tiny.json"


@pytest.fixture(scope="module")
def conversations():  # type: ignore[no-untyped-def]
    return load_locomo(FIXTURE)


def test_turns_in_session_order_with_session_times(conversations) -> None:  # type: ignore[no-untyped-def]
    first, second = conversations
    assert [t.dia_id for t in first.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert first.turns[0].event_time == datetime(2021, 3, 3, 9, 15, tzinfo=UTC)
    assert first.turns[-1].event_time == datetime(2021, 4, 20, 18, 40, tzinfo=UTC)
    # session_3 has a date but no turns: it is not a session, and not the reference time
    assert first.reference_time == datetime(2021, 4, 20, 18, 40, tzinfo=UTC)
    # keys out of order in the file: sessions still go by number
    assert [t.dia_id for t in second.turns] == ["D1:1", "D1:2", "D2:1"]
    assert second.reference_time == datetime(2022, 1, 5, 20, 0, tzinfo=UTC)


def test_content_is_speaker_text_and_caption(conversations) -> None:  # type: ignore[no-untyped-def]
    turns = {t.dia_id: t for t in conversations[0].turns}
    assert turns["D1:1"].content == "Ava: Morning Ben! I finally adopted a grey cat named Pixel."
    caption = "[shares an image: a photo of a grey cat on a red sofa]"
    assert turns["D1:3"].content == f"Ava: Look at this. {caption}"


def test_evidence_is_normalised_and_unresolvable_ids_dropped(conversations) -> None:  # type: ignore[no-untyped-def]
    questions = {q.question: q for q in conversations[0].questions}
    assert questions["What instrument does Ben play and what does his teacher advise?"].evidence == (
        "D1:2",
        "D2:1",
    )
    assert questions["When is the concert?"].evidence == ("D2:3",)
    assert questions["What colour is the sofa in Ava's photo?"].evidence == ("D1:3",)
    # an empty list and a list of unresolvable ids leave two questions unscored
    assert conversations[0].skipped_questions == 2
    assert len(conversations[0].questions) == 5
    # D9:9, "D" and D7:1 do not resolve
    assert conversations[0].dropped_evidence == 3


def test_categories_and_answers(conversations) -> None:  # type: ignore[no-untyped-def]
    questions = conversations[0].questions
    assert sorted(q.category for q in questions) == [1, 2, 3, 4, 5]
    adversarial = next(q for q in questions if q.category == 5)
    assert adversarial.answer == "Pixel"


def test_normalize_evidence_forms() -> None:
    known = ["D1:1", "D1:2", "D30:5", "D9:1", "D4:4"]
    ids, dropped = normalize_evidence(["D30:05", "D9:1 D4:4", "D:1:2", "D1:1", "D1:1", "x"], known)
    assert ids == ("D30:5", "D9:1", "D4:4", "D1:2", "D1:1")
    assert dropped == 1


def test_limit(conversations) -> None:  # type: ignore[no-untyped-def]
    assert [c.sample_id for c in load_locomo(FIXTURE, limit=1)] == ["tiny-1"]


def test_parse_session_time() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    with pytest.raises(ValidationError):
        parse_session_time("not a date at all")


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"sample_id": "x"}),
        json.dumps([{"conversation": {}}]),
        json.dumps([{"sample_id": "x", "conversation": {"session_1": [{"speaker": "A", "text": "t"}]}}]),
        json.dumps([{"sample_id": "x", "conversation": {"session_1_date_time": "1 May 2020"}}]),
        json.dumps(
            [
                {
                    "sample_id": "x",
                    "conversation": {
                        "session_1_date_time": "1 May 2020",
                        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
                    },
                    "qa": [{"question": "q?"}],
                }
            ]
        ),
    ],
)
def test_bad_files_raise_validation_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValidationError):
        load_locomo(path)


def test_missing_file_raises_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError):
        load_locomo(tmp_path / "absent.json")


def test_parse_conversation_rejects_non_objects() -> None:
    with pytest.raises(ValidationError):
        parse_conversation(["not", "an", "object"])


def test_observations_are_read_leniently(conversations) -> None:  # type: ignore[no-untyped-def]
    first, second = conversations
    found = {(o.text, o.evidence) for o in first.observations}
    # unresolvable evidence, a malformed entry and blank text are skipped, not errors
    assert found == {
        ("Ava adopted a grey cat called Pixel.", ("D1:1",)),
        ("Ava shared a photo of her cat.", ("D1:3",)),
        ("Ben is learning the cello.", ("D1:2",)),
    }
    assert second.observations == ()


def test_observations_become_training_groups_only_when_asked(conversations) -> None:  # type: ignore[no-untyped-def]
    plain = locomo_query_groups(conversations)
    more = locomo_query_groups(conversations, observations=True)
    assert len(more) == len(plain) + 3
    cello = next(g for g in more if g.query == "Ben is learning the cello.")
    assert cello.positives == ("Ben: That's lovely. I started learning the cello last week.",)
    assert set(cello.candidates) <= {t.content for t in conversations[0].turns}
