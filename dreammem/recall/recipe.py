"""The recall recipe: what each recall path is, in one place, and the named presets.

A path's spec says everything the rest of recall needs to know about it, so no stage
tests a path's name:

- ``weight``: the weight of its rank in the fusion (``RecallConfig.path_weights``
  overrides it per path);
- ``reads``: ``"text"`` (the query's text only: it may run while the query is
  embedded), ``"embedding"`` (the query vector) or ``"candidates"`` (what the
  paths in ``after`` found for this recall);
- ``after``: the paths whose candidates it reads; recall runs paths in an order
  that honours these, whatever order a configuration lists them in;
- ``stands_in_for``: a path whose list it replaces in the fusion when it answers;
- ``judged``: how the relevance gate judges a memory only it found: ``"similarity"``
  (its candidates carry their cosine to the query), ``"query"`` (it passes when the
  query as a whole does) or ``"own_vector"`` (by the cosine of its own stored vector:
  it was found beside another hit, not by the query);
- ``transcript``: it reads speakers, so it finds nothing in a store without them (a
  user-assistant chat);
- ``lexical``: it finds memories by exact words, the query's own (keyword) or an
  identifier shared with the best matches (bridge), so the gate may take its hits on that
  evidence when the query as a whole passes (``RecallConfig.lexical_evidence``);
- ``index``: it searches one of the store's own indexes: when every such path of a
  recall failed, the store did, and recall raises its error instead of answering
  nothing from the paths that need no store.

Presets name sets of paths. ``general`` (the default) holds the mechanisms that help
on chat memory and on transcripts alike: the four first-stage paths, the reply path
(it votes only for the lines of named speakers, so it acts on transcripts and group
chats, not on a user-assistant chat), the bridge path (from the best matches to the
memories sharing a rare identifier with them), and three paths that act only on what a question
names (``naming``, ``unnamed``, ``person``: they find nothing in a store whose memories
carry no speakers). ``plain`` leaves those three out; ``transcript`` adds the ``speaker`` path, which
votes for every line of a speaker the question names (it costs questions that name
the wrong person); ``lexical`` is keyword and time only. The numbers behind the
default are in docs/BENCHMARKS.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_PRESET",
    "PATHS",
    "PRESETS",
    "PathSpec",
    "essential_paths",
    "found_beside_only",
    "later_stage",
    "measures_similarity",
    "reads_text_only",
    "run_order",
    "stand_ins_for",
    "unknown_paths",
    "word_rank",
]

Reads = Literal["text", "embedding", "candidates"]
Judged = Literal["similarity", "query", "own_vector"]


@dataclass(frozen=True, slots=True)
class PathSpec:
    """What one recall path is (see the module docstring for each field)."""

    name: str
    summary: str
    weight: float = 1.0
    reads: Reads = "embedding"
    after: tuple[str, ...] = ()
    stands_in_for: str | None = None
    judged: Judged = "query"
    transcript: bool = False
    lexical: bool = False
    index: bool = False


_FIRST = ("keyword", "vector", "temporal")
"""The first-stage paths whose candidates the later paths read."""

PATHS: Mapping[str, PathSpec] = {
    spec.name: spec
    for spec in (
        PathSpec("vector", "nearest memories by embedding cosine", judged="similarity", index=True),
        PathSpec(
            "keyword",
            "BM25 over the memory's words and its turn's context",
            reads="text",
            lexical=True,
            index=True,
        ),
        PathSpec(
            "temporal",
            "memories in the time window the query names, or matches ordered by time",
            after=("vector", "keyword"),
        ),
        PathSpec(
            "graph", "memories one or two hops from the entities the query names", weight=0.25, reads="text"
        ),
        PathSpec(
            "reply",
            "the session neighbours of the best matches (the reply to a question, the question to an "
            "answer), among named speakers' lines",
            reads="candidates",
            after=_FIRST,
            judged="own_vector",
            transcript=True,
        ),
        PathSpec(
            "speaker",
            "the lines of a speaker the question names, among the first stage's candidates",
            reads="candidates",
            after=_FIRST,
            transcript=True,
        ),
        PathSpec(
            "naming",
            "for a question asking for a list, the candidate lines that name something",
            reads="candidates",
            after=_FIRST,
            transcript=True,
        ),
        PathSpec(
            "unnamed",
            "the vector search of a question naming speakers, done without the names",
            after=_FIRST,
            stands_in_for="vector",
            transcript=True,
        ),
        PathSpec(
            "person",
            "the named speaker's own lines nearest the question without the names",
            weight=0.5,
            after=_FIRST,
            transcript=True,
        ),
        PathSpec(
            "bridge",
            "memories sharing a rare entity (an id, a code, a name, a date) with the first stage's "
            "best candidates",
            reads="candidates",
            after=_FIRST,
            lexical=True,
        ),
        PathSpec("second_vector", "the store's opt-in second embedding model", weight=0.5),
    )
}
"""Every path recall can run, by name."""

_PLAIN = ("vector", "keyword", "temporal", "graph", "reply", "bridge")
_NAMED = ("naming", "unnamed", "person")
PRESETS: Mapping[str, tuple[str, ...]] = {
    "general": (*_PLAIN, *_NAMED),
    "plain": _PLAIN,
    "transcript": (*_PLAIN, *_NAMED, "speaker"),
    "lexical": ("keyword", "temporal"),
}
"""Named sets of paths (``RecallConfig.preset``)."""

DEFAULT_PRESET = "general"
"""The preset a configuration runs unless it names another (docs/BENCHMARKS.md says why)."""


def unknown_paths(names: Iterable[str]) -> list[str]:
    """The names that are not paths of :data:`PATHS`, sorted."""
    return sorted(set(names) - set(PATHS))


def run_order(names: Iterable[str], specs: Mapping[str, PathSpec] = PATHS) -> tuple[str, ...]:
    """The paths in an order where each runs after those it reads (``after``), else as in ``specs``.

    The order a configuration lists paths in does not change what recall finds. Names
    without a spec are left out.
    """
    wanted = set(names)
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for before in specs[name].after:
            if before in wanted:
                visit(before)
        ordered.append(name)

    for name in specs:
        if name in wanted:
            visit(name)
    return tuple(ordered)


def later_stage(names: Sequence[str], specs: Mapping[str, PathSpec] = PATHS) -> tuple[str, ...]:
    """The paths that read the first stage's candidates (a path they read reads others' itself).

    The first stage (keyword, vector, temporal, graph) finds candidates; the later paths work
    from them (reply, speaker, naming, ...), so recall may read what they need about the
    candidates at once between the two.
    """
    return tuple(n for n in names if any(specs[a].after for a in specs[n].after if a in specs))


def stand_ins_for(names: Iterable[str], specs: Mapping[str, PathSpec] = PATHS) -> dict[str, str]:
    """``{stand-in: path it replaces}`` among these paths."""
    return {n: spec.stands_in_for for n in names if (spec := specs[n]).stands_in_for is not None}


def essential_paths(names: Sequence[str], specs: Mapping[str, PathSpec] = PATHS) -> tuple[str, ...]:
    """The paths of a recall that search the store's own indexes (all of them when none does)."""
    return tuple(n for n in names if specs[n].index) or tuple(names)


def reads_text_only(name: str, specs: Mapping[str, PathSpec] = PATHS) -> bool:
    """Whether the path reads only the query's text (it may run while the query is embedded)."""
    return specs[name].reads == "text"


def reads_embedding_only(name: str, specs: Mapping[str, PathSpec] = PATHS) -> bool:
    """Whether the path reads the query's embedding and no other path's candidates (may run beside them)."""
    spec = specs[name]
    return spec.reads == "embedding" and not spec.after


def measures_similarity(names: Iterable[str], specs: Mapping[str, PathSpec] = PATHS) -> bool:
    """Whether any of these paths carries its candidates' cosine to the query."""
    return any(specs[n].judged == "similarity" for n in names)


def word_rank(ranks: Mapping[str, int], specs: Mapping[str, PathSpec] = PATHS) -> int | None:
    """The best rank a memory has among the paths that find memories by exact words (``lexical``)."""
    return min((rank for name, rank in ranks.items() if specs[name].lexical), default=None)


def found_beside_only(names: Iterable[str], specs: Mapping[str, PathSpec] = PATHS) -> bool:
    """Whether every one of these paths found its memory beside another hit (judged by its own vector)."""
    return all(specs[n].judged == "own_vector" for n in names)
