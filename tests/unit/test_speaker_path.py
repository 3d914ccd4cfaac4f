"""The speaker recall path: a question naming a person ranks that person's own transcript lines."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.recall.speaker import SpeakerPath, named_speaker
from dreammem.text.speakers import speaker_label
from tests.transcripts import T0, contents, keyword_query, said_by, transcript_memory

LINES = [
    "Marcus: Kids are so curious, they ask about everything at the science museum.",
    "Priya: My kids love the science museum, especially the planets.",
    "Marcus: The museum cafe was packed with kids on Sunday.",
    "Priya: We took the train to the coast last weekend.",
    "Note: the museum closes early on holidays.",
]


def _memory(paths: tuple[str, ...] = ("vector", "keyword", "temporal", "graph")) -> DreamMemory:
    return transcript_memory(LINES, "Priya: My kids love the science museum.", paths=paths)


def test_a_speaker_is_named_as_a_whole_word() -> None:
    assert named_speaker("priya", "What do Priya's kids love?")
    assert named_speaker("mary ann", "where did mary ann go?")
    assert not named_speaker("ann", "What did Annabel say?")


def test_the_path_keeps_the_named_speakers_lines_in_the_vote_order() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "What do Priya's kids love at the museum?")
        keyword = contents(memory, list(query.earlier["keyword"]))
        assert any(line.startswith("Marcus:") for line in keyword)  # the other speaker matches the words

        found = SpeakerPath(memory.store, sources=("keyword",)).search(query)

        assert contents(memory, found) == [line for line in keyword if line.startswith("Priya:")]
        assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)


def test_no_named_speaker_or_no_candidates_finds_nothing() -> None:
    with _memory() as memory:
        path = SpeakerPath(memory.store)
        assert path.search(keyword_query(memory, "what do the kids love at the museum?")) == []
        assert (
            path.search(dataclasses.replace(keyword_query(memory, "what does Priya love?"), earlier={})) == []
        )
        # "Note:" heads a line without naming a speaker
        assert path.search(keyword_query(memory, "when does the museum close, note?")) == []


def test_the_path_stays_inside_the_user() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "What do Priya's kids love?", user="u2")
        found = SpeakerPath(memory.store, sources=("keyword",)).search(query)
        assert contents(memory, found, user="u2") == ["Priya: My kids love the science museum."]
        assert memory.store.get_by_rowids("u1", [c.rowid for c in found]) == {}


def test_recall_fuses_the_speaker_path_when_configured() -> None:
    with _memory(("vector", "keyword", "speaker")) as memory:
        result = memory.recall("What do Priya's kids love?", user_id="u1", k=3)
        assert result.hits and "speaker" in result.hits[0].paths
        assert result.hits[0].record.content == LINES[1]
        assert "speaker" not in result.degraded


def test_a_chinese_transcript_ranks_the_named_speakers_lines() -> None:
    lines = ["小王：我周末去爬山了", "老李：我周末在家看书", "小王：爬山的时候下雨了"]
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [
                {
                    "content": text,
                    "user_id": "u1",
                    "speaker": said_by(text),
                    "event_time": T0 + timedelta(minutes=i),
                }
                for i, text in enumerate(lines)
            ]
        )
        query = keyword_query(memory, "小王周末做了什么？")
        assert len(contents(memory, list(query.earlier["keyword"]))) == 3  # every line says 周末

        found = SpeakerPath(memory.store, sources=("keyword",)).search(query)

        assert sorted(contents(memory, found)) == sorted(lines[0::2])
        assert named_speaker("小王", "小王周末做了什么？") and not named_speaker("小王", "老李周末做了什么？")


def test_a_long_line_is_labelled_as_a_short_one_is() -> None:
    words = " ".join(["we walked by the river"] * 300)
    assert speaker_label(f"Priya: {words}") == ("priya", words)
    assert speaker_label(f"Priya: {words}") == (
        "priya",
        words,
    )  # again: the same answer
    assert speaker_label("Note: bring the map") == (None, "Note: bring the map")


def test_the_speaker_is_the_records_field_never_a_label_in_the_text() -> None:
    lines = [
        ("Gina: We danced at the studio downtown.", None),  # a label in the text, no speaker
        ("We practised a new routine at the studio.", "Gina"),  # Gina's line, no label
        ("Jon: The studio has a new floor.", "Jon"),
    ]
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [
                {"content": text, "user_id": "u1", "speaker": who, "event_time": T0 + timedelta(minutes=i)}
                for i, (text, who) in enumerate(lines)
            ]
        )
        query = keyword_query(memory, "What did Gina do at the studio?")
        assert len(contents(memory, list(query.earlier["keyword"]))) == 3  # every line says "studio"

        found = SpeakerPath(memory.store, sources=("keyword",)).search(query)

        assert contents(memory, found) == ["We practised a new routine at the studio."]


def test_a_store_without_speakers_gets_nothing() -> None:
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [
                {"content": "Gina: We danced at the studio.", "user_id": "u1", "event_time": T0},
                {
                    "content": "Did Gina dance at the studio?",
                    "user_id": "u1",
                    "role": "assistant",
                    "event_time": T0,
                },
            ]
        )
        query = keyword_query(memory, "What did Gina do at the studio?")
        assert query.earlier["keyword"]
        assert SpeakerPath(memory.store, sources=("keyword",)).search(query) == []
