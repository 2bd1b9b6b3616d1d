"""Optional query rewriting: the rewrite role's model (``retrieval.rewrite_provider``) turns a
follow-up question plus the current-turn context into a standalone search query. Any failure
falls back to the raw query. Off by default."""

from __future__ import annotations

from dataclasses import dataclass

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ExternalServiceError
from ..settings import RetrievalSettings
from .recorder import StageRecorder
from .request import SearchRequest

SYSTEM = (
    "You rewrite a memory-search request into one standalone search query. The request was written "
    "in the middle of a conversation and may lean on it (pronouns, 'that', 'the same one', elided "
    "subjects). Use the conversation excerpt only to resolve those references. Do not answer the "
    "question, do not add facts, names or constraints that are not in the request or the excerpt, "
    "and keep the query short. If the request is already standalone, return it unchanged."
)


class RewriteReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(description="The standalone search query.")


@dataclass
class RewriteOutcome:
    query: str  # the query the pipeline will use
    rewritten: str | None  # the model's query when it was used
    status: str  # rewritten | unchanged | failed: ... | unavailable: ...


class QueryRewriter:
    """Asks the rewrite role's :class:`~memory_core.llm.LanguageModel` for a standalone query."""

    def __init__(self, llm, timeout_s: float, max_query_chars: int) -> None:
        self.llm = llm
        self.timeout_s = timeout_s
        self.max_query_chars = max_query_chars

    def rewrite(self, query: str, context: str) -> RewriteOutcome:
        if self.llm is None:  # only the Anthropic provider can be without a client (no key)
            return RewriteOutcome(query, None, "unavailable: no Anthropic API key is configured")
        prompt = f"Conversation excerpt:\n<context>\n{context}\n</context>\n\nSearch request:\n<request>\n{query}\n</request>"
        try:
            reply = self.llm.ask(system=SYSTEM, prompt=prompt, schema=RewriteReply, max_tokens=200, timeout=self.timeout_s)
        except ExternalServiceError as exc:
            kind = exc.details.get("kind", "error")
            return RewriteOutcome(query, None, f"failed: {kind}; used the raw query")
        text = " ".join(reply.query.split())
        if not text:
            return RewriteOutcome(query, None, "failed: empty rewrite; used the raw query")
        if len(text) > self.max_query_chars:
            return RewriteOutcome(query, None, "failed: rewrite longer than max_query_chars; used the raw query")
        if text == " ".join(query.split()):
            return RewriteOutcome(query, None, "unchanged")
        return RewriteOutcome(text, text, "rewritten")


class RewriterSource(Protocol):
    """Where the stage gets its rewriter (the retriever, :class:`~.services.SearchServices`)."""

    def rewriter(self, settings: RetrievalSettings) -> QueryRewriter: ...


class RewriteStage:
    """Optional: a standalone query from the raw query and host-supplied current-turn context."""

    name = "rewrite"

    @dataclass(slots=True)
    class Inputs:
        request: SearchRequest
        settings: RetrievalSettings

    @dataclass(slots=True)
    class Outputs:
        query: str  # the query every later stage searches with
        rewritten_query: str | None
        rewrite_status: str

    def run(self, given: Inputs, rec: StageRecorder, deps: RewriterSource) -> Outputs:
        req = given.request
        enabled = given.settings.rewrite_enabled if req.rewrite is None else req.rewrite
        rec.io(inputs={"raw_query": req.query, "context_chars": len(req.context or ""), "enabled": enabled})
        if not enabled:
            rec.skip("rewriting is disabled")
            return self.Outputs(req.query, None, "disabled")
        if not (req.context or "").strip():
            status = "skipped: no current-turn context"
            rec.skip(status)
            return self.Outputs(req.query, None, status)
        outcome = deps.rewriter(given.settings).rewrite(req.query, req.context)
        rec.io(outputs={"query": outcome.query, "rewritten_query": outcome.rewritten, "status": outcome.status})
        return self.Outputs(outcome.query, outcome.rewritten, outcome.status)
