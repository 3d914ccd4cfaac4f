"""Random sequences of facade operations keep the store's invariants after every step.

A hypothesis state machine writes turns and core memories, edits, forgets, reverts,
purges, dreams and undoes dreams for two users in any order. After each step:

* no record is superseded by (or an earlier text of) a record that does not exist;
* a slot never has two active semantic values (outside imports, which this never does);
* recall returns only active records of the asking user;
* the vector index holds exactly the active records;
* the dream queue holds only records of its user.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dreammem import DreamMemory, NotFoundError, Status, ValidationError
from dreammem.embed import HashingEmbedder

T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
USERS = ("alice", "bob")
TEXTS = (
    "I prefer Excel reports over PDF",
    "I prefer Word reports over PDF",
    "Actually, I now prefer CSV reports",
    "My budget is 4000 USD",
    "My budget is 5200 USD",
    "I live in Porto",
    "I moved to Lisbon",
    "I take my coffee with regular milk.",
    "I switched to oat milk in my coffee.",
    "Remember: I am allergic to peanuts",
    "Tom Becker from Acme Corp signs the contracts",
    "ok thanks",
    "我的预算是3000元",
)


class FacadeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.memory = DreamMemory(None, embedder=HashingEmbedder())
        self.minutes = 0
        self.dreams: dict[str, list[str]] = {u: [] for u in USERS}

    def teardown(self) -> None:
        self.memory.close()

    def _when(self, jump: int) -> datetime:
        self.minutes += jump
        return T0 + timedelta(minutes=self.minutes)

    def _ids(self, user: str, status: str | None = "active") -> list[str]:
        return [r.id for r in self.memory.get_all(user_id=user, status=status, limit=1000)]

    @rule(
        user=st.sampled_from(USERS),
        text=st.sampled_from(TEXTS),
        session=st.sampled_from(["s1", "s2"]),
        jump=st.integers(min_value=-30, max_value=240),
    )
    def add(self, user: str, text: str, session: str, jump: int) -> None:
        self.memory.add(text, user_id=user, session_id=session, event_time=self._when(jump))

    @rule(user=st.sampled_from(USERS), text=st.sampled_from(TEXTS))
    def remember(self, user: str, text: str) -> None:
        self.memory.remember(text, user_id=user)

    @rule(user=st.sampled_from(USERS), pick=st.integers(min_value=0), text=st.sampled_from(TEXTS))
    def update(self, user: str, pick: int, text: str) -> None:
        ids = self._ids(user)
        if ids:
            self.memory.update(ids[pick % len(ids)], text, user_id=user)

    @rule(user=st.sampled_from(USERS), pick=st.integers(min_value=0))
    def forget(self, user: str, pick: int) -> None:
        ids = self._ids(user)
        if ids:
            self.memory.forget(ids[pick % len(ids)], user_id=user)

    @rule(user=st.sampled_from(USERS), pick=st.integers(min_value=0))
    def revert(self, user: str, pick: int) -> None:
        ids = self._ids(user, "superseded")
        if ids:
            try:
                self.memory.revert_update(ids[pick % len(ids)], user_id=user)
            except ValidationError:
                pass  # superseded by a slot, an edit or a dream, not by an update decision

    @rule(user=st.sampled_from(USERS), pick=st.integers(min_value=0))
    def purge(self, user: str, pick: int) -> None:
        ids = self._ids(user, None)
        if ids:
            self.memory.purge(ids[pick % len(ids)], user_id=user)

    @rule(user=st.sampled_from(USERS), level=st.sampled_from([1, 1, 2]))
    def dream(self, user: str, level: int) -> None:
        report = self.memory.dream(user_id=user, level=level)
        if report.dream_id in {d.dream_id for d in self.memory.dreams(user_id=user)}:  # empty: not logged
            self.dreams[user].append(report.dream_id)

    @precondition(lambda self: any(self.dreams.values()))
    @rule(user=st.sampled_from(USERS))
    def undo_newest(self, user: str) -> None:
        if self.dreams[user]:
            self.memory.undo_dream(self.dreams[user].pop(), user_id=user)

    @invariant()
    def links_point_at_records_that_exist(self) -> None:
        for user in USERS:
            records = {r.id: r for r in self.memory.get_all(user_id=user, status=None, limit=5000)}
            for record in records.values():
                if record.status is Status.SUPERSEDED and record.superseded_by is not None:
                    assert record.superseded_by in records, ("dangling superseded_by", record)

    @invariant()
    def a_slot_has_one_active_value(self) -> None:
        for user in USERS:
            slots: dict[str, list[str]] = {}
            for record in self.memory.get_all(user_id=user, layer="semantic", limit=5000):
                if record.slot is not None:
                    slots.setdefault(record.slot, []).append(record.content)
            assert all(len(v) == 1 for v in slots.values()), slots

    @invariant()
    def recall_returns_active_records_of_the_user(self) -> None:
        for user in USERS:
            for hit in self.memory.recall("reports budget milk Lisbon peanuts", user_id=user, k=10).hits:
                assert hit.record.user_id == user and hit.record.status is Status.ACTIVE, hit.record

    @invariant()
    def the_vector_index_holds_the_active_records(self) -> None:
        active = sum(len(self._ids(u)) for u in USERS)
        assert self.memory.stats()["vectors"] == active

    @invariant()
    def the_queue_is_per_user(self) -> None:
        for user in USERS:
            for record in self.memory.store.queued(user):
                assert record.user_id == user
                try:
                    self.memory.get(record.id, user_id=user)
                except NotFoundError as exc:  # pragma: no cover - the assertion message
                    raise AssertionError(f"a queued record is gone: {record.id}") from exc


FacadeMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestFacadeMachine = FacadeMachine.TestCase
