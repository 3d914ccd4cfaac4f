"""The person recall path: the named person's own lines, searched with the name taken out."""

from __future__ import annotations

import dataclasses

import pytest

from dreammem import DreamMemory
from dreammem.recall.base import Candidate
from dreammem.recall.fusion import stand_ins
from dreammem.recall.person import PersonPath, UnnamedVectorPath, named_speakers, without_names
from dreammem.recall.recipe import stand_ins_for
from tests.transcripts import contents, keyword_query, transcript_memory

# Oskar says "Priya" in every line he speaks to her; Priya's own lines never name herself.
LINES = [
    "Oskar: Priya, Priya, how are you doing today, Priya?",
    "Priya: We took the twins to the aquarium and they adored the jellyfish.",
    "Oskar: Thanks Priya! My dog adored the beach.",
    "Priya: Saturday I baked bread for the neighbours.",
    "Oskar: Priya, the twins must be big now!",
    "Note: Priya said the aquarium opens at nine.",
]


def _memory() -> DreamMemory:
    return transcript_memory(
        LINES, "Priya: The twins adored the jellyfish.", paths=("vector", "keyword", "person")
    )


def _path(memory: DreamMemory, depth: int = 200) -> PersonPath:
    return PersonPath(memory.store, memory.vector_index, memory.embedder, depth=depth, sources=("keyword",))


def test_names_and_their_possessives_are_taken_out() -> None:
    assert without_names("What did Priya's twins adore?", ["priya"]) == "What did twins adore?"
    assert without_names("Did Mary Ann and Jo both go?", ["mary ann", "jo"]) == "Did and both go?"
    assert without_names("Ask Priyanka, not Priya’s sister", ["priya"]) == "Ask Priyanka, not sister"


def test_the_speakers_are_read_from_the_earlier_candidates_records() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "What did Priya's twins adore?")
        assert named_speakers(memory.store, query, ("keyword",)) == ["priya"]
        # Oskar's lines are candidates (they say "Priya"), but the question does not name him.
        assert "oskar" not in named_speakers(memory.store, query, ("keyword",))


def test_only_the_named_speakers_lines_most_similar_first() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "What did Priya's twins adore?")
        found = contents(memory, _path(memory).search(query))
        assert found[0] == LINES[1]
        assert all(line.startswith("Priya:") for line in found)
        assert LINES[3] in found  # her line sharing no word with the question still comes (a deep search)


def test_no_named_speaker_or_nothing_left_finds_nothing() -> None:
    with _memory() as memory:
        path = _path(memory)
        assert path.search(keyword_query(memory, "what did the twins adore?")) == []
        assert (
            path.search(dataclasses.replace(keyword_query(memory, "what did Priya adore?"), earlier={})) == []
        )
        assert path.search(keyword_query(memory, "Priya?")) == []


def test_the_path_stays_inside_the_user() -> None:
    with _memory() as memory:
        found = _path(memory).search(keyword_query(memory, "What did Priya's twins adore?", user="u2"))
        assert contents(memory, found, user="u2") == ["Priya: The twins adored the jellyfish."]
        assert memory.store.get_by_rowids("u1", [c.rowid for c in found]) == {}


def test_recall_fuses_it_and_a_bad_depth_is_refused() -> None:
    with _memory() as memory:
        result = memory.recall("What did Priya's twins adore?", user_id="u1", k=3)
        assert result.hits[0].record.content == LINES[1]
        assert "person" in result.hits[0].paths
        with pytest.raises(ValueError, match="depth"):
            _path(memory, depth=0)


def _unnamed(memory: DreamMemory) -> UnnamedVectorPath:
    return UnnamedVectorPath(memory.store, memory.vector_index, memory.embedder, sources=("keyword",))


def test_the_unnamed_vector_path_embeds_the_question_without_the_names() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "Priya twins?")
        plain = contents(memory, memory.pipeline.paths["vector"].search(query))
        unnamed = contents(memory, _unnamed(memory).search(query))
        assert plain[0] == LINES[0]  # "Priya" three times in a greeting: the name wins
        # Without the name, the lines about the twins lead; the rest share no word and tie at 0.
        assert set(unnamed[:2]) == {LINES[1], LINES[4]}


def test_the_unnamed_path_answers_only_a_question_naming_a_speaker() -> None:
    with _memory() as memory:
        assert _unnamed(memory).search(keyword_query(memory, "what did the twins adore?")) == []
        assert _unnamed(memory).search(keyword_query(memory, "Priya?")) == []


def test_an_answering_stand_in_takes_the_vector_paths_place_in_the_fusion() -> None:
    vector, unnamed = [Candidate(1, 0.9)], [Candidate(2, 0.8)]
    replaces = stand_ins_for(["vector", "unnamed"])
    assert replaces == {"unnamed": "vector"}
    assert stand_ins({"vector": vector, "unnamed": unnamed}, {}, replaces) == {"unnamed": unnamed}
    assert stand_ins({"vector": vector, "unnamed": []}, {}, replaces) == {"vector": vector, "unnamed": []}
    assert stand_ins({"vector": vector, "unnamed": unnamed}, {"unnamed": 0.0}, replaces) == {
        "vector": vector,
        "unnamed": unnamed,
    }
    with _memory() as memory:
        memory.pipeline.config = memory.pipeline.config.model_copy(
            update={"paths": ("vector", "keyword", "unnamed")}
        )
        named = memory.recall("Priya twins?", user_id="u1", k=5)
        assert all("vector" not in hit.paths for hit in named.hits)
        assert any("unnamed" in hit.paths for hit in named.hits)
        plain = memory.recall("what did the twins adore?", user_id="u1", k=5)
        assert any("vector" in hit.paths for hit in plain.hits)
