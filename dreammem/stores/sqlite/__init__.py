"""SQLite record store: records, keyword index, stored embeddings and the dream's tables.

One SQLite file is the source of truth; the FAISS index and the graph are derived
from it. The store is composed of one class per table family:

* :mod:`~dreammem.stores.sqlite.connection`: connection, migrations, transactions, meta;
* :mod:`~dreammem.stores.sqlite.records`: the records;
* :mod:`~dreammem.stores.sqlite.erasure`: hard deletes of records and users, compaction;
* :mod:`~dreammem.stores.sqlite.keyword`: BM25 over the two-column FTS5 index;
* :mod:`~dreammem.stores.sqlite.vectors`: stored embeddings;
* :mod:`~dreammem.stores.sqlite.dreams`: queue, task state, dream log;
* :mod:`~dreammem.stores.sqlite.times`: the windows records' relative dates point at;

and :mod:`~dreammem.stores.sqlite.codec` turns rows into records and back.
"""

from __future__ import annotations

from dreammem.stores.base import REQUIRED_CAPABILITIES, RecordCapability, RecordStore
from dreammem.stores.sqlite.dreams import DreamRows
from dreammem.stores.sqlite.erasure import SQLiteErasure
from dreammem.stores.sqlite.keyword import KeywordRows
from dreammem.stores.sqlite.times import TimeRows
from dreammem.stores.sqlite.vectors import VectorRows

__all__ = ["SQLiteRecordStore"]


class SQLiteRecordStore(SQLiteErasure, KeywordRows, VectorRows, DreamRows, TimeRows, RecordStore):
    """The :class:`~dreammem.stores.base.RecordStore` in one SQLite file.

    Args:
        path: The database file, or ``":memory:"`` for an ephemeral store.
        context_weight: The BM25 weight of the keyword context column (own words weigh 1.0).
    """

    capabilities = REQUIRED_CAPABILITIES | {RecordCapability.GROUNDED_TIMES}
