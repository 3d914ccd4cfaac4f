"""The roles a record store is built from: one small ABC each, composed by ``RecordStore``.

* :mod:`~dreammem.stores.roles.lifecycle`: ``StoreLifecycle`` (transactions, meta values);
* :mod:`~dreammem.stores.roles.records`: ``RecordReads``, ``RecordLookups``, ``RecordWrites``;
* :mod:`~dreammem.stores.roles.history`: ``RecordHistory`` (supersede chains, twins);
* :mod:`~dreammem.stores.roles.keyword`: ``KeywordIndex``;
* :mod:`~dreammem.stores.roles.times`: ``TimeIndex`` (grounded windows optional);
* :mod:`~dreammem.stores.roles.embeddings`: ``StoredEmbeddings``;
* :mod:`~dreammem.stores.roles.dreams`: ``DreamQueue``, ``TaskStates``, ``DreamLog``;
* :mod:`~dreammem.stores.roles.erasure`: ``Erasure``;

Import them from :mod:`dreammem.stores.base`, where :class:`~dreammem.stores.base.RecordStore`
puts them together; a caller that needs one role may type against it.
"""
