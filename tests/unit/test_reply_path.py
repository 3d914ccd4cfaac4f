"""The reply recall path: the turns around the best matches of a conversation."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import Candidate, RecallPath, RecallQuery
from dreammem.recall.reply import ReplyPath, neighbour_votes
from tests.transcripts import contents, keyword_query, said_by

T0 = datetime(2025, 6, 1, 18, 0, tzinfo=UTC)
FIRST = [
    "Lena: How was the pottery class on Saturday?",
    "Omar: Great, I finally made a blue vase for my mother.",
    "Lena: She must have loved it.",
]
SECOND = [
    "Omar: Work has been hectic this week.",
    "Lena: Did you finish the quarterly report?",
    "Omar: Yes, it went out on Thursday.",
]
PATHS = ("vector", "keyword", "temporal")


def _memory(paths: tuple[str, ...] = PATHS, *, sessions: bool = True) -> DreamMemory:
    memory = DreamMemory(
        None, embedder=HashingEmbedder(), config=DreamMemConfig(recall=RecallConfig(paths=paths))
    )
    for day, lines in enumerate((FIRST, SECOND)):
        memory.add_many(
            [
                {
                    "content": line,
                    "user_id": "u1",
                    "session_id": f"s{day}" if sessions else None,
                    "speaker": said_by(line),
                    "event_time": T0 + timedelta(days=day),  # one time per session: order is insertion
                }
                for line in lines
            ]
        )
    memory.add(
        "Omar: Great, I finally made a blue vase.",
        user_id="u2",
        session_id="s0",
        speaker="Omar",
        event_time=T0,
    )
    return memory


def _query(memory: DreamMemory, text: str, user: str = "u1") -> RecallQuery:
    return keyword_query(memory, text, user, after=timedelta(days=3))


def test_votes_add_up_over_the_seeds_a_turn_is_next_to() -> None:
    votes = neighbour_votes([1, 2, 9], {1: (None, 5), 2: (5, 3)}, rrf_k=10)
    assert votes == {5: pytest.approx(1 / 11 + 1 / 12), 3: pytest.approx(1 / 12)}


def test_the_answer_after_the_matching_question_is_found() -> None:
    with _memory() as memory:
        query = _query(memory, "How was the pottery class?")
        assert (
            contents(memory, list(query.earlier["keyword"]))[0] == FIRST[0]
        )  # the words match the asking turn

        found = contents(memory, ReplyPath(memory.store, sources=("keyword",)).search(query))

        assert found[0] == FIRST[1]  # the next turn of the same session
        assert not set(found) & set(SECOND[:1])  # nothing across the session boundary from FIRST


def test_the_previous_turn_of_a_match_gets_a_vote_too() -> None:
    with _memory() as memory:
        query = _query(memory, "when did the quarterly report go out? Thursday")
        found = contents(memory, ReplyPath(memory.store, sources=("keyword",), seeds=1).search(query))
        assert found == [SECOND[1]]  # the seed is the last line; only the line before it is a neighbour


def test_a_question_naming_a_speaker_votes_for_that_speakers_lines_only() -> None:
    with _memory() as memory:
        query = _query(memory, "How was Omar's pottery class?")
        path = ReplyPath(memory.store, sources=("keyword",))
        found = contents(memory, path.search(query))
        assert found and all(line.startswith("Omar:") for line in found)
        assert found[0] == FIRST[1]  # Omar's answer to the matching question
        anyone = contents(memory, path.search(_query(memory, "How was the pottery class?")))
        assert any(line.startswith("Lena:") for line in anyone)  # no name: both sides get votes


def test_without_sessions_or_candidates_it_finds_nothing_and_changes_nothing() -> None:
    with _memory(sessions=False) as memory:
        assert ReplyPath(memory.store).search(_query(memory, "How was the pottery class?")) == []
    with _memory() as memory:
        query = dataclasses.replace(_query(memory, "How was the pottery class?"), earlier={})
        assert ReplyPath(memory.store).search(query) == []
    with _memory((*PATHS, "reply"), sessions=False) as on, _memory(sessions=False) as off:
        question = "what did Omar make at the pottery class?"
        assert [h.record.content for h in on.recall(question, user_id="u1")] == [
            h.record.content for h in off.recall(question, user_id="u1")
        ]


def test_the_path_stays_inside_the_user_and_the_allowed_rows() -> None:
    with _memory() as memory:
        query = _query(memory, "How was the pottery class?", user="u2")
        assert (
            ReplyPath(memory.store, sources=("keyword",)).search(query) == []
        )  # u2's one turn has no neighbour
        mine = _query(memory, "How was the pottery class?")
        assert (
            ReplyPath(memory.store, sources=("keyword",)).search(
                dataclasses.replace(mine, allowed=frozenset())
            )
            == []
        )


def test_fused_in_recall_it_lifts_the_turn_before_the_match() -> None:
    question = (
        "She must have loved it, what was it?"  # the words match the follow-up, the answer is before it
    )
    with _memory((*PATHS, "reply")) as on, _memory() as off:
        with_reply = on.recall(question, user_id="u1", k=6)
        without = [h.record.content for h in off.recall(question, user_id="u1", k=6)]
        found = [h.record.content for h in with_reply]
        assert found[0] == without[0] == FIRST[2]
        assert found.index(FIRST[1]) < without.index(FIRST[1])
        assert with_reply.hits[found.index(FIRST[1])].ranks["reply"] == 1


def test_seeds_must_be_positive() -> None:
    with _memory() as memory, pytest.raises(ValueError, match="seeds"):
        ReplyPath(memory.store, seeds=0)


class _TopOne:
    """The vector path cut to its best candidate (a large store: most turns lie below its last)."""

    def __init__(self, path: RecallPath) -> None:
        self.path = path

    def search(self, query: RecallQuery) -> list[Candidate]:
        return self.path.search(query)[:1]


def test_a_turn_found_only_beside_a_match_is_held_to_its_own_cosine() -> None:
    # The words match Omar's answer; the question before it (FIRST[0]) is found by the reply
    # path alone. With a floor, its own stored cosine decides, as for a vector hit, not whether
    # the query as a whole passes (which lets a keyword-only hit in).
    question = "what was made for a mother? a blue vase"

    def recall(floor: float | None) -> dict[str, tuple[str, ...]]:
        config = RecallConfig(paths=(*PATHS, "reply"), relevance_floor=floor)
        with _memory() as memory:
            memory.pipeline.config = config
            memory.pipeline.paths["vector"] = _TopOne(memory.pipeline.paths["vector"])
            return {h.record.content: h.paths for h in memory.recall(question, user_id="u1", k=6)}

    assert recall(None)[FIRST[0]] == ("reply",)  # no floor: the neighbour is recalled
    held = recall(0.2)
    assert FIRST[1] in held and FIRST[0] not in held  # shares no word with the question
    assert FIRST[2] in held and "vector" not in held[FIRST[2]]  # a keyword-only hit still passes
    assert FIRST[0] in recall(-0.5)  # a floor its own cosine clears lets it in again


CHAT = [
    ("user", "I adopted a kitten named Miso last week."),
    ("assistant", "Congratulations! Kittens need a quiet corner, fresh water and a litter tray."),
    ("user", "What food is best for a kitten?"),
    ("assistant", "Kittens need protein-rich wet food several times a day."),
]


def _chat(paths: tuple[str, ...] = PATHS, *, named: bool = False) -> DreamMemory:
    """A user-assistant chat: turns carry their role, and a speaker only when ``named``."""
    memory = DreamMemory(
        None, embedder=HashingEmbedder(), config=DreamMemConfig(recall=RecallConfig(paths=paths))
    )
    memory.add_many(
        [
            {
                "content": text,
                "user_id": "u1",
                "session_id": "chat",
                "role": role,
                "speaker": ("Sam" if role == "user" else "Assistant") if named else None,
                "event_time": T0 + timedelta(minutes=n),
            }
            for n, (role, text) in enumerate(CHAT)
        ]
    )
    return memory


def test_in_a_chat_whose_turns_carry_no_speaker_it_votes_for_no_turn() -> None:
    # Adjacency is evidence between named participants: in a user-assistant chat every turn
    # beside a match is on the same topic, and its vote re-ranks what the first stage found.
    question = "what is the kitten named Miso?"
    with _chat() as memory:
        query = _query(memory, question)
        assert query.earlier["keyword"]  # the first stage found the chat's turns
        assert ReplyPath(memory.store, sources=("keyword",)).search(query) == []
    with _chat(named=True) as memory:
        found = contents(
            memory, ReplyPath(memory.store, sources=("keyword",)).search(_query(memory, question))
        )
        assert CHAT[1][1] in found  # the same chat with named speakers: the neighbours get votes


def test_only_the_lines_that_carry_a_speaker_get_a_vote() -> None:
    with _chat() as memory:
        memory.add(
            "Sam: Miso sleeps on the windowsill all afternoon.",
            user_id="u1",
            session_id="chat",
            speaker="Sam",
            event_time=T0 + timedelta(minutes=len(CHAT)),
        )
        found = contents(
            memory, ReplyPath(memory.store, sources=("keyword",)).search(_query(memory, "kitten food"))
        )
        assert found == ["Sam: Miso sleeps on the windowsill all afternoon."]


def test_in_a_chat_without_speakers_recall_is_the_same_with_the_path_on() -> None:
    question = "which food did you suggest for the kitten?"
    with _chat((*PATHS, "reply")) as on, _chat() as off:
        with_reply = on.recall(question, user_id="u1", k=4)
        assert [h.record.content for h in with_reply] == [
            h.record.content for h in off.recall(question, user_id="u1", k=4)
        ]
        assert not any("reply" in h.paths for h in with_reply)
