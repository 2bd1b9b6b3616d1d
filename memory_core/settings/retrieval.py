"""The search pipeline's settings (``retrieval``): generators, fusion, the gate's floors, collapse, budget."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .base import _Section


class RetrievalSettings(_Section):
    candidates_per_generator: int = Field(30, ge=1, le=500, description="Candidates each generator (dense, lexical, entity) may return.")
    rrf_k: float = Field(
        5.0, gt=0,
        description="Reciprocal-rank fusion constant k in 1/(k + rank); small k trusts each generator's top ranks more "
        "(measured on LoCoMo, docs/retrieval.md).",
    )
    cosine_floor: float = Field(
        0.40, ge=-1.0, le=1.0,
        description="Empty-result gate: the result set passes when some candidate's cosine to the query is at least this. "
        "Calibrated for the packaged MiniLM (docs/calibration.md); recalibrate after changing the embedder.",
    )
    cosine_floor_unknown_name: float = Field(
        0.60, ge=-1.0, le=1.0,
        description="Empty-result gate: the cosine floor instead of cosine_floor when the query names something (a "
        "capitalised word, not the first) that no readable record holds, such as a person this memory has never seen.",
    )
    lexical_floor: float = Field(
        0.50, ge=0.0, le=1.0,
        description="Empty-result gate: the result set passes when some candidate's lexical score (the idf-weighted share of "
        "the query's terms it holds, over readable records; 0 to 1, independent of store size) is at least this.",
    )
    entity_support_cosine: float = Field(
        0.40, ge=-1.0, le=1.0,
        description="An exact entity match lets the result set pass only with support for the rest of the question: the "
        "matched record's cosine at least this, or its lexical score on the words other than the name at least entity_support_lexical.",
    )
    entity_support_lexical: float = Field(
        0.50, ge=0.0, le=1.0,
        description="Lexical support an entity match needs from the words of the query other than the entity's name (0 to 1).",
    )
    name_rest_cosine: float = Field(
        0.26, ge=-1.0, le=1.0,
        description="Empty-result gate, for a query that names a known entity: the result set passes only if some candidate's "
        "cosine to the query with the names taken out is at least this (or name_rest_lexical holds); -1 turns the rule off. "
        "Applies to names whose entity list is full (they link candidates_per_generator or more readable records). "
        "A mention of a name is not relevance (docs/calibration.md).",
    )
    name_rest_lexical: float = Field(
        1.0, ge=0.0, le=1.0,
        description="Empty-result gate, for a query that names a known entity: the alternative support, some candidate's "
        "lexical score on the query's words other than the names at least this.",
    )
    name_model_floor: float = Field(
        0.1075, ge=-1.0, le=1.0,
        description="Empty-result gate, for a query that names a known entity with a full entity list: the result set passes "
        "only if the known-name model (a logistic model over the name-stripped cosine, the other-words lexical score, their "
        "best joint value, the best cosine and lexical score, whether every name is held, and the stem coverage of the "
        "other words; retrieve/gate/model.py) gives at least this probability. "
        "-1 turns the model off (name_rest_cosine and name_rest_lexical then decide). Calibrated with name_model_weights.",
    )
    name_model_weights: list[float] = Field(
        # fitted on LoCoMo half A (conv-26, -41, -43, -47, -49) with the word-level signals, 1 December 2026 (docs/calibration.md)
        default_factory=lambda: [-9.608917, 0.0, 0.0, 4.018722, 6.714299, 0.0, 0.901241, 0.454487, 2.456112, 1.464739],
        min_length=7, max_length=10,
        description="The known-name model's bias and weights (rest cosine, rest lexical, rest joint, cosine, lexical, every "
        "name held, then rest coverage by stem, its joint with the rest cosine, and the share of the rest's words held; "
        "a list of 7 leaves the last three out), fitted "
        "by `agent-memory calibrate` on one half of LoCoMo (docs/calibration.md); refit after changing the embedder.",
    )
    short_list_names_need_rest: bool = Field(
        True,
        description="Empty-result gate, for a query that spells the name of a known entity linking few readable records (fewer "
        "than candidates_per_generator): the result set passes only if the rest of the question finds support too (a "
        "candidate's cosine to the query without the names, or that cosine plus half its stem coverage of the other words, at "
        "least cosine_floor; or its lexical score on the other words at least entity_support_lexical). False: such a name "
        "counts as evidence by itself, as before (docs/retrieval.md).",
    )
    rest_list_in_fusion: bool = Field(
        True,
        description="For a query naming a known entity with a full entity list, the candidates ordered by cosine to the query "
        "with the names taken out join the reciprocal-rank fusion as a fourth list (docs/retrieval.md).",
    )
    result_floor: float = Field(
        0.25, ge=-1.0, le=1.0,
        description="Once the gate lets a result set through, a candidate whose cosine and lexical score are both below "
        "this (and which is not strong evidence itself) is still dropped: a junk tail is no answer.",
    )
    freshness_half_life_days: float = Field(
        90.0, gt=0, description="Half-life of the episodic recency weight applied to fused scores."
    )
    freshness_weight: float = Field(
        0.3, ge=0.0, le=1.0, description="How much of an episodic record's fused score depends on recency (0: none); 0.3 "
        "costs LoCoMo nothing and puts the newest of several dated decisions first more often (docs/calibration.md).",
    )
    freshness_scope: Literal["recency_questions", "always"] = Field(
        "recency_questions",
        description="When freshness applies: to queries about the present, the recent past or a decision's outcome ('currently', "
        "'now', 'decide last', 'in the end', ...; not 'last week'), or to every query (costs LoCoMo recall).",
    )
    collapse_threshold: float = Field(
        0.95, ge=0.5, le=1.0,
        description="Cosine at or above which a surviving candidate is folded into a better-ranked one as a near-duplicate.",
    )
    token_budget: int = Field(
        1500, ge=50, le=100_000,
        description="Tokens a response may carry: each result's estimated content tokens plus token_overhead_per_result "
        "(docs/retrieval.md explains the estimate).",
    )
    default_limit: int = Field(10, ge=1, le=100, description="Results returned when the caller gives no limit.")
    max_limit: int = Field(50, ge=1, le=500, description="Largest limit a caller may ask for.")
    rewrite_enabled: bool = Field(False, description="Rewrite the raw query into a standalone query with the model of rewrite_provider.")
    rewrite_provider: Literal["anthropic", "openai_compatible"] = Field(
        "anthropic",
        description="Which model rewrites queries: Anthropic's (needs an API key; without one the raw query is used) "
        "or the openai_compatible model (section openai_compatible).",
    )
    rewrite_timeout_s: float = Field(3.0, gt=0, description="Seconds before the rewrite falls back to the raw query.")
    reranker_enabled: bool = Field(False, description="Rerank surviving candidates with bge-reranker-v2-m3.")
    reranker_mode: Literal["after_floors", "replace_floors"] = Field(
        "after_floors",
        description="Rerank after the empty-result gate, or let the reranker's score replace the floors.",
    )
    reranker_model_path: str | None = Field(None, description="Local directory of the reranker weights.")
    reranker_timeout_s: float = Field(2.0, gt=0, description="Seconds before reranking falls back to the fused order.")
    reranker_min_score: float = Field(
        0.0,
        description="In replace_floors mode, the minimum reranker score (0 to 1) a result needs; 0 lets every candidate through.",
    )
    reranker_max_length: int = Field(
        512, ge=16, le=8192, description="Tokens of query plus record content the reranker reads per pair."
    )
    max_query_chars: int = Field(2000, ge=16, le=100_000, description="Longest search query accepted.")
    lexical_max_terms: int = Field(
        16, ge=1, le=256,
        description="Most query terms (after stop-word removal) that enter the FTS5 expression; later ones are ignored.",
    )
    lexical_max_df_share: float = Field(
        0.5, gt=0.0, le=1.0,
        description="Query terms held by more than this share of the readable records are left out of lexical search "
        "and its score: they carry almost no information (1 keeps all).",
    )
    lexical_max_postings: int = Field(
        2000, ge=1,
        description="Cost bound for lexical search: a query term held by more than this many readable records is left "
        "out (each kept term's readable postings are read). Binds only on large stores.",
    )
    entity_max_ngram: int = Field(
        4, ge=1, le=8, description="Longest run of query words looked up as an exact entity alias."
    )
    token_overhead_per_result: int = Field(
        20, ge=0, le=1000,
        description="Tokens charged to the budget for each result's envelope (id, type, dates, explanation) on top of its content.",
    )
    rewrite_context_turns: int = Field(
        6, ge=0, le=100,
        description="memory_search tool calls: how many of the session's latest transcript turns the rewriter sees as context.",
    )
    rewrite_context_chars: int = Field(
        4000, ge=0, le=100_000, description="Longest rewrite context kept (the newest characters are kept)."
    )
    # -- speed (issue 16) --
    query_cache_size: int = Field(
        1024, ge=0, le=1_000_000,
        description="Query vectors kept in memory (least recently used dropped first) so a repeated query is not "
        "embedded again; keyed by the embedder's model and version. 0 disables the cache.",
    )
    overlap_query_embedding: bool = Field(
        True,
        description="Embed the query on a worker thread while the lexical and entity generators run, and let the "
        "dense generator wait for the vector (the design's benchmark-gated generator concurrency; docs/retrieval.md). "
        "Results are the same either way; off embeds first, on the searching thread.",
    )
    ann_min_records: int = Field(
        200_000, ge=1,
        description="The dense generator switches from exact search to the approximate (faiss IVF) index once the "
        "vector index holds at least this many live rows; exact below it, as the design asks.",
    )
    ann_exact_below_allowed: int = Field(
        50_000, ge=0,
        description="Even with the approximate index on, a search whose hard filter allows at most this many rows is "
        "answered exactly (scanning that few rows is as fast as the approximate search and always exact).",
    )
    ann_nprobe: int = Field(
        32, ge=1, le=65_536,
        description="Approximate index: inverted lists scanned per query (more is slower and closer to exact).",
    )
    ann_persist: bool = Field(
        True,
        description="Keep the approximate index in a file next to the store (<store>.ivf) so an open loads it and "
        "applies the changes since, instead of training it again (about a minute at 1M rows). The file is keyed by the "
        "embedder's model and version and the store's change feed, checksummed, and removed when a record is forgotten.",
    )
    vector_file: bool = Field(True, description="Keep the vector index in <store>.vectors, mapped on open and brought up to "
                              "date from the change feed instead of reading every record (checks and erasure: docs/store.md).")
    vector_file_min_records: int = Field(10_000, ge=1, description="Write the vector file once the index holds this many vectors.")

    @field_validator("name_model_weights")
    @classmethod
    def _model_shape(cls, value: list[float]) -> list[float]:
        # a bias and nine weights, or a bias and the first six (a setting from before the word-level signals)
        if len(value) not in (7, 10):
            raise ValueError("name_model_weights takes a bias and 9 weights (or a bias and the first 6)")
        return value
