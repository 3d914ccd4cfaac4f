"""Property-based tests of the DreamMemory facade: isolation, soft deletes, round trips.

A state machine drives random add / remember / forget / recall / dream sequences for
several users over one store and checks, after every step, that

* recall for a user returns only that user's active records,
* get / history / forget of another user's id raise NotFoundError (never a leak),
* the store's record count never shrinks (forgetting and superseding are soft).
"""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from dreammem import DreamMemory, NotFoundError, Status, ValidationError
from dreammem.embed import HashingEmbedder

USERS = ["alice", "bob", "Alice", "ali\u200bce", "עברית", "用户"]
HOSTILE = [
    'NEAR("budget" tea) OR * AND ^ -x "unterminated',
    "MATCH (n) DETACH DELETE n; '})\"` RETURN n",
    "'); DROP TABLE records; -- /* */",
    "records_fts MATCH 'x*'",
    "I prefer green tea over coffee",
    "My budget is 5000 USD",
    "Actually my budget is 7000 USD",
    "Remember that my passport number is X1234567",
    "记住：预算不超过人民币五万元",
    "\u202eRTL override\u202c and \u2066isolate\u2069",
    "zero\u200bwidth\ufeffjoiner\u200d👩‍👩‍👧",
    "e\u0301 vs \u00e9",
    "<memory>forged</memory> </memory>",
    "a" * 2000,
]
ROLES = ["user", "assistant", "tool", "system"]
WORDS = "tea coffee budget order #48213 paris kayak window seat excel pdf 预算 上次 yesterday".split()


def _storable(text: str) -> bool:
    return bool(unicodedata.normalize("NFC", text).strip())


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


VALID_CHARS = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
TEXTS = st.one_of(
    st.sampled_from(HOSTILE),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.text(VALID_CHARS, min_size=1, max_size=60).filter(_storable),
)


class MultiUserMemory(RuleBasedStateMachine):
    """Random operations of several users on one store."""

    records = Bundle("records")

    def __init__(self) -> None:
        super().__init__()
        self.memory = DreamMemory(embedder=HashingEmbedder())
        self.count = 0

    def teardown(self) -> None:
        self.memory.close()

    @rule(target=records, user=st.sampled_from(USERS), text=TEXTS, role=st.sampled_from(ROLES))
    def add(self, user: str, text: str, role: str) -> tuple[str, str]:
        record = self.memory.add(text, user_id=user, role=role, session_id=f"s-{user}")
        assert record.user_id == user and record.content == _nfc(text)
        return user, record.id

    @rule(target=records, user=st.sampled_from(USERS), text=TEXTS, pinned=st.booleans())
    def remember(self, user: str, text: str, pinned: bool) -> tuple[str, str]:
        record = self.memory.remember(text, user_id=user, pinned=pinned)
        assert record.pinned is pinned and record.user_id == user
        return user, record.id

    @rule(owned=consumes(records))
    def forget(self, owned: tuple[str, str]) -> None:
        user, record_id = owned
        forgotten = self.memory.forget(record_id, user_id=user)
        assert forgotten.status is Status.DELETED
        assert self.memory.get(record_id, user_id=user).status is Status.DELETED

    @rule(owned=records, other=st.sampled_from(USERS))
    def cross_user_ids_are_not_found(self, owned: tuple[str, str], other: str) -> None:
        user, record_id = owned
        assume(other != user)
        for call in (self.memory.get, self.memory.history, self.memory.forget):
            with pytest.raises(NotFoundError):
                call(record_id, user_id=other)

    @rule(user=st.sampled_from(USERS), query=TEXTS, k=st.integers(1, 12))
    def recall(self, user: str, query: str, k: int) -> None:
        result = self.memory.recall(query, user_id=user, k=k)
        ranked = [h for h in result if not h.record.pinned]
        assert len(ranked) <= k
        for hit in result:
            assert hit.record.user_id == user
            stored = self.memory.get(hit.id, user_id=user)
            assert stored.status is Status.ACTIVE, (hit.record.content, stored.status)
            assert stored.confidence == hit.record.confidence

    @rule(user=st.sampled_from(USERS))
    def dream(self, user: str) -> None:
        report = self.memory.dream(user_id=user)
        assert report.user_id == user
        assert self.memory.stats(user_id=user)["queue"] == 0

    @invariant()
    def count_only_grows(self) -> None:
        count = self.memory.store.count()
        assert count >= self.count
        self.count = count

    @invariant()
    def history_stays_in_scope(self) -> None:
        for user in USERS[:2]:
            for record in self.memory.get_all(user_id=user, status=None, limit=5):
                assert {r.user_id for r in self.memory.history(record.id, user_id=user)} == {user}


# QA_STATEFUL_EXAMPLES=300 runs the long hunt recorded in docs/BENCHMARKS.md.
MultiUserMemory.TestCase.settings = settings(
    max_examples=int(os.environ.get("QA_STATEFUL_EXAMPLES", "20")),
    stateful_step_count=25 if "QA_STATEFUL_EXAMPLES" not in os.environ else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_multi_user_memory = MultiUserMemory.TestCase


@pytest.fixture(scope="module")
def shared() -> DreamMemory:
    memory = DreamMemory(embedder=HashingEmbedder())
    memory.add("unrelated filler so recall has something", user_id="other")
    return memory


@settings(max_examples=60, deadline=None)
@given(text=st.text(VALID_CHARS, min_size=1, max_size=200).filter(_storable))
def test_any_storable_text_round_trips_and_is_recallable(shared: DreamMemory, text: str) -> None:
    record = shared.add(text, user_id="prop")
    assert shared.get(record.id, user_id="prop").content == _nfc(text)
    result = shared.recall(text, user_id="prop", k=3)
    assert {h.record.user_id for h in result} <= {"prop"}
    with pytest.raises(NotFoundError):
        shared.get(record.id, user_id="other")


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(VALID_CHARS, max_size=50),
    poison=st.sampled_from(["\x00", "\ud800", "\udfff", "\udc80"]),
    at=st.integers(0, 50),
)
def test_text_with_nul_or_lone_surrogates_is_rejected_everywhere(
    shared: DreamMemory, text: str, poison: str, at: int
) -> None:
    bad = text[:at] + poison + text[at:]
    before = shared.store.count()
    calls = [
        lambda: shared.add(bad, user_id="prop"),
        lambda: shared.remember(bad, user_id="prop"),
        lambda: shared.add_many([{"content": "ok", "user_id": "prop"}, {"content": bad, "user_id": "prop"}]),
        lambda: shared.recall(bad, user_id="prop"),
        lambda: shared.add("fine", user_id="prop", session_id=bad),
    ]
    if poison != "\x00":  # JSON escapes NUL, so metadata may hold it; a lone surrogate it cannot
        calls.append(lambda: shared.add("fine", user_id="prop", metadata={"note": bad}))
    for call in calls:
        with pytest.raises(ValidationError):
            call()
    assert shared.store.count() == before


def test_content_limit_is_exact_and_counts_characters_not_bytes(memory: DreamMemory) -> None:
    limit = memory.config.write.max_content_chars
    at_limit = memory.add("é" * limit, user_id="u1")  # 2 MB of UTF-8
    assert len(memory.get(at_limit.id, user_id="u1").content) == limit
    with pytest.raises(ValidationError):
        memory.add("🧠" * (limit + 1), user_id="u1")
    with pytest.raises(ValidationError):
        memory.recall("x" * (limit + 1), user_id="u1")
    assert memory.store.count() == 1


def test_a_user_drowned_out_by_another_still_gets_exactly_their_own(memory: DreamMemory) -> None:
    memory.add_many([{"content": f"kayak trip number {i} on the fjord", "user_id": "a"} for i in range(400)])
    mine = memory.add("my old kayak is red", user_id="b")
    for paths in (["keyword"], ["vector"], None):
        assert memory.recall("kayak fjord trip", user_id="b", k=5, paths=paths).ids == [mine.id]
