"""The telemetry section: OpenTelemetry spans when the host has configured a tracer provider."""

from __future__ import annotations

from pydantic import Field, SecretStr

from .base import _Section


class TelemetrySettings(_Section):
    enabled: bool = Field(
        True,
        description="Make OpenTelemetry spans for searches (one child span per pipeline stage), writes, forgets, tool "
        "calls and extraction runs when the host has configured a tracer provider (the library never configures one; "
        "without one nothing is recorded and the cost is a few function calls). False makes no spans even then "
        "(docs/observability.md).",
    )
    record_content: bool = Field(
        False,
        description="Also put memory text on spans: the query (gen_ai.memory.query.text) and the content and evidence "
        "of records searched or written (gen_ai.memory.records). Off by default because traces usually leave the "
        "machine for a collector; with it off no memory text, query or evidence is ever a span attribute.",
    )
    user_hash_key: SecretStr | None = Field(
        None,
        description="Key of the keyed hash (HMAC-SHA256) that stands for a user id on spans "
        "(agent_memory.user.hash); the id itself never appears. Unset means a random key per process: hashes then "
        "match only within one process. Set it (the same in every process) to follow one user across processes; "
        "keep it secret, since whoever holds it can test a guessed user id against a hash.",
    )
