"""Conformance suites for the store contracts, importable by any backend's tests.

Subclass a suite in a ``test_*.py`` module and override its fixture (as langchain's
standard tests do)::

    class TestMyStore(RecordStoreSuite):
        @pytest.fixture
        def record_store(self, tmp_path): ...

Each test works in fresh user ids and cleans up after itself, so a shared server
stays clean. :func:`check_read_for_update_holds_off_writers` needs two stores on one
database, so it is a function to call rather than a suite test. Needs ``pytest`` (a
test dependency, not a runtime one).
"""

from dreammem.testing.concurrency import check_read_for_update_holds_off_writers
from dreammem.testing.record_store_suite import RecordStoreSuite
from dreammem.testing.vector_index_suite import VectorIndexSuite

__all__ = ["RecordStoreSuite", "VectorIndexSuite", "check_read_for_update_holds_off_writers"]
