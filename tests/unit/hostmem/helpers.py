"""Shared pieces of the host-memory tests: a small world, and a fake Anthropic client."""

from __future__ import annotations

import json

from memory_core.llm.anthropic_client import StructuredLLM, parse_json_reply
from memory_core.settings import AnthropicSettings


class QueuedLLM(StructuredLLM):
    """A real StructuredLLM subclass whose replies come from a queue instead of the network.

    Each reply is a dict (sent through the same JSON parsing as a model answer), a str (the raw
    answer text) or an exception instance (raised as the request's failure). Every request is kept.
    """

    def __init__(self, replies: list, model: str = "claude-haiku-4-5") -> None:
        super().__init__(AnthropicSettings(api_key="test-key", model=model, max_retries=0))
        self.replies = list(replies)
        self.requests: list[dict] = []

    def ask(self, *, system, prompt, schema, max_tokens=1024, timeout=None):
        self.requests.append({"system": system, "prompt": prompt, "schema": schema.__name__})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return parse_json_reply(reply if isinstance(reply, str) else json.dumps(reply), schema)


def small_world(service) -> dict[str, str]:
    """alice's and bob's facts, an Apollo project fact; the agent reads all of them. Returns key -> id."""
    for scope in ("user:alice", "user:bob", "project:apollo"):
        service.grant("assistant", scope, read=True, write=True, actor="test")
    facts = {
        "alice_diet": ("user:alice", "Alice is vegan: she eats no meat, fish, eggs or dairy.", "diet", None),
        "alice_lang": ("user:alice", "Alice writes her code in Rust.", "programming_language", None),
        "bob_allergy": ("user:bob", "Bob is vegan and allergic to peanuts.", "allergy", None),
        "apollo_deploy": ("project:apollo", "The Apollo project deploys to Kubernetes from the main branch.", "deploy_process", "Apollo"),
    }
    ids = {}
    for key, (scope, content, attribute, about) in facts.items():
        outcome = service.write_system_fact(scope=scope, content=content, attribute=attribute, about=about,
                                            about_kind="project" if about else "other", actor="test")
        ids[key] = outcome.record.id
    return ids
