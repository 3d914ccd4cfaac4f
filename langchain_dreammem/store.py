"""A LangGraph ``BaseStore`` on DreamMem: long-term memory for ``create_agent`` and graphs.

Namespace mapping::

    namespace = ("alice", "preferences")     # namespace[user_index] is the user id
    store.put(namespace, "drink", {"text": "likes green tea"})

* ``namespace[user_index]`` (default position 0) is the DreamMem ``user_id``: every
  operation runs inside that user's scope. A namespace (or a search prefix) too
  short to hold it raises :class:`~dreammem.errors.ScopeError`; there is no
  cross-user search. Namespace labels follow LangGraph's rules (no ``.``, so an
  email address cannot be a label as it is: hash or escape it).
* Each item is a semantic DreamMem record (:mod:`dreammem.keyed`): its text is the
  value's text (``fields`` or the put's ``index`` paths; by default every string
  or number in the value), and the whole namespace, key and value are kept in the
  record's system notes (``system["keyed"]``, not the caller's ``metadata``). DreamMem
  recall (the middleware, the retriever, the tools) finds store items like any other memory.
* A put with an existing key supersedes the old record (kept in history, marked
  ``superseded``); ``get`` returns the newest. A delete soft-deletes it.
* ``search(prefix, query=...)`` ranks the items under the prefix by DreamMem recall
  (vector + keyword paths, fused); ``SearchItem.score`` is that recall score
  (higher is better; not a cosine). Items put with ``index=False`` and items recall
  did not reach follow with score None, as in ``InMemoryStore``. Without a query,
  items come in insertion order. ``filter`` supports exact matches, nested dicts
  and ``$eq $ne $gt $gte $lt $lte``.
* ``list_namespaces`` lists the namespaces holding live items, across users (it
  returns labels only, never values).
* TTL is not supported (``supports_ttl = False``).
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    validate_op_namespace,
)

from dreammem.errors import ScopeError, ValidationError
from dreammem.keyed import (
    KeyedEntry,
    delete_keyed,
    get_keyed,
    keyed_paths,
    list_keyed,
    put_keyed,
    rank_keyed,
)
from dreammem.memory import DreamMemory
from dreammem.validation import check_content, check_metadata, check_user_id

__all__ = ["DreamMemStore"]


class DreamMemStore(BaseStore):
    """LangGraph long-term store backed by DreamMem (see the module docs for the mapping).

    Args:
        memory: The DreamMem store.
        user_index: Which namespace label is the user id (``("memories", "{user}")``
            style namespaces, as LangMem uses, take ``user_index=1``).
        fields: Paths of the value whose text is indexed (LangGraph path syntax, e.g.
            ``["text", "tags[*]"]``); default every string or number in the value.
    """

    supports_ttl = False

    def __init__(
        self, memory: DreamMemory, *, user_index: int = 0, fields: Sequence[str] | None = None
    ) -> None:
        if isinstance(user_index, bool) or not isinstance(user_index, int) or user_index < 0:
            raise ValidationError(f"user_index must be an int >= 0, got {user_index!r}")
        self.memory = memory
        self.user_index = user_index
        self.fields = list(fields) if fields is not None else None

    # -- the two abstract methods ---------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order; like ``InMemoryStore``, reads see the state before the batch's puts."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        results: list[Result] = []
        for op in ops:
            if isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op  # the last put of a key wins
                results.append(None)
            else:
                results.append(self._read(op))
        # Check every put before writing any, so a bad value in a batch writes nothing.
        for op, text in [self._checked(op) for op in puts.values()]:
            self._put(op, text)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch` (runs it in a worker thread)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- ops ------------------------------------------------------------------------------------

    def _user(self, namespace: tuple[str, ...]) -> str:
        if len(namespace) <= self.user_index:
            raise ScopeError(
                f"namespace {namespace!r} has no user id: label {self.user_index} must be the user id"
            )
        return namespace[self.user_index]

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            entry = get_keyed(self.memory, user_id=self._user(op.namespace), path=op.namespace, key=op.key)
            return None if entry is None else _item(entry)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return _list_namespaces(keyed_paths(self.memory), op)
        raise ValueError(f"unknown operation type: {type(op).__name__}")

    def _checked(self, op: PutOp) -> tuple[PutOp, str | None]:
        """The put and the text its value is indexed by, once both are known to be storable."""
        check_user_id(self._user(op.namespace))
        if op.value is None:
            return op, None
        if not isinstance(op.value, Mapping):
            raise ValidationError(f"value must be a mapping, got {type(op.value).__name__}")
        check_metadata(op.value)
        text = _value_text(op.value, op.index if isinstance(op.index, list) else self.fields)
        return op, check_content(text, max_chars=self.memory.config.write.max_content_chars)

    def _put(self, op: PutOp, text: str | None) -> None:
        user = self._user(op.namespace)
        if op.value is None or text is None:
            delete_keyed(self.memory, user_id=user, path=op.namespace, key=op.key)
            return
        put_keyed(
            self.memory,
            user_id=user,
            path=op.namespace,
            key=op.key,
            value=op.value,
            text=text,
            indexed=op.index is not False,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        user = self._user(op.namespace_prefix)
        if op.query is not None and not isinstance(op.query, str):
            raise ValidationError(f"query must be a str or None, got {type(op.query).__name__}")
        entries = [
            e
            for e in list_keyed(self.memory, user_id=user, prefix=op.namespace_prefix)
            if not op.filter or all(_matches(e.value.get(k), v) for k, v in op.filter.items())
        ]
        end = op.offset + op.limit
        if not op.query or not op.query.strip():  # a blank query lists, like no query
            return [_search_item(e, None) for e in entries[op.offset : end]]
        ranked = rank_keyed(self.memory, op.query, user_id=user, entries=entries, depth=end)
        scored: list[tuple[KeyedEntry, float | None]] = [(e, s) for e, s in ranked if s is not None]
        kept = scored[op.offset : end]
        unscored = [e for e, s in ranked if s is None]
        kept += [(e, None) for e in unscored[: max(0, op.limit - len(kept))]]
        return [_search_item(e, s) for e, s in kept]


def _item(entry: KeyedEntry) -> Item:
    return Item(
        namespace=entry.path,
        key=entry.key,
        value=entry.value,
        created_at=entry.created_at,
        updated_at=entry.updated_at,
    )


def _search_item(entry: KeyedEntry, score: float | None) -> SearchItem:
    item = _item(entry)
    return SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at, score)


def _leaves(value: Any, path: str = "") -> list[str]:
    """Every string or number in a JSON value, as ``path: text`` (a bare text at the top)."""
    if isinstance(value, Mapping):
        return [line for k, v in value.items() for line in _leaves(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list | tuple):
        return [line for v in value for line in _leaves(v, path)]
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return [f"{path}: {value}" if path else str(value)]
    return []


def _value_text(value: Mapping[str, Any], paths: Sequence[str] | None) -> str:
    """The text DreamMem indexes an item by."""
    if paths is not None:
        texts = [t for p in paths for t in get_text_at_path(value, p)]
    else:
        texts = _leaves(value)
        if len(texts) == 1:  # one text field: index the text itself, not "field: text"
            texts = [texts[0].split(": ", 1)[-1]]
    return "\n".join(t for t in texts if t.strip()) or json.dumps(
        value, sort_keys=True, ensure_ascii=False, default=repr
    )


def _matches(actual: Any, expected: Any) -> bool:
    """LangGraph filter semantics: exact match, nested dicts, and ``$`` operators."""
    if isinstance(expected, Mapping):
        if any(str(k).startswith("$") for k in expected):
            return all(_compare(actual, op, v) for op, v in expected.items())
        return isinstance(actual, Mapping) and all(_matches(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_matches(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _compare(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op in _NUMERIC:
        left, right = _number(actual), _number(operand)
        # Python compares an int and a float exactly: no float() of a huge int, NaN matches nothing
        return left is not None and right is not None and _NUMERIC[op](left, right)
    raise ValidationError(f"unsupported filter operator: {op}")


def _number(value: Any) -> float | None:
    """A number to compare (an int stays an int), or None for a missing or non-numeric value."""
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _list_namespaces(namespaces: list[tuple[str, ...]], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    found = [ns for ns in namespaces if all(_ns_matches(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        found = sorted({ns[: op.max_depth] for ns in found})
    return found[op.offset : op.offset + op.limit]


def _ns_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)
