"""Conformance suites for the store contracts, importable by any backend's tests.

Subclass a suite in a ``test_*.py`` module and override its fixture (as langchain's
standard tests do)::

    class TestMyStore(RecordStoreSuite):
        @pytest.fixture
        def record_store(self, tmp_path): ...

:class:`RecordStoreSuite` is one suite per role of :mod:`dreammem.stores.roles`
together (:data:`ROLE_SUITES`); subclass the role suites one by one to see each
role's result apart. Each test works in fresh user ids and cleans up after itself, so
a shared server stays clean. :func:`check_read_for_update_holds_off_writers` needs two
stores on one database, so it is a function to call rather than a suite test. Needs
``pytest`` (a test dependency, not a runtime one).
"""

from dreammem.testing.concurrency import check_read_for_update_holds_off_writers
from dreammem.testing.dreams_suite import DreamLogSuite, DreamQueueSuite, TaskStatesSuite
from dreammem.testing.index_suite import KeywordIndexSuite, StoredEmbeddingsSuite, TimeIndexSuite
from dreammem.testing.record_store_suite import (
    ROLE_SUITES,
    AcrossRolesSuite,
    ErasureSuite,
    RecordStoreSuite,
    suites_not_run,
)
from dreammem.testing.records_suite import RecordHistorySuite, RecordsSuite, StoreLifecycleSuite
from dreammem.testing.vector_index_suite import VectorIndexSuite

__all__ = [
    "ROLE_SUITES",
    "AcrossRolesSuite",
    "DreamLogSuite",
    "DreamQueueSuite",
    "ErasureSuite",
    "KeywordIndexSuite",
    "RecordHistorySuite",
    "RecordStoreSuite",
    "RecordsSuite",
    "StoreLifecycleSuite",
    "StoredEmbeddingsSuite",
    "TaskStatesSuite",
    "TimeIndexSuite",
    "VectorIndexSuite",
    "check_read_for_update_holds_off_writers",
    "suites_not_run",
]
