"""The parts of what a model was (or would be) given, each with its token count and share of the whole.

Tokens are counted with :func:`memory_core.text.count_tokens`, the store's offline estimate (the
same count the ambient profile's token bound uses): one token per started four letters or digits
of a word, one per punctuation mark or symbol. For English prose it lands at or slightly above
what BPE tokenizers report; a given model's tokenizer will differ, so the counts are an estimate
and labelled so. No tokenizer is loaded and nothing leaves the machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memory_core.text import count_tokens

TOKEN_RULE = ("Tokens are an offline estimate (memory_core.text.count_tokens: one per started 4 letters or digits of "
              "a word, one per punctuation mark), the count the ambient profile's token bound uses. It runs at or "
              "slightly above what BPE tokenizers give for English; the model's own tokenizer will differ.")


@dataclass
class Part:
    """One part of a context: what it is, its size (None when its text is gone) and its share."""

    part: str
    detail: str
    tokens: int | None
    share: float | None = None

    def row(self) -> dict[str, Any]:
        return {"part": self.part, "detail": self.detail if self.tokens is not None else f"{self.detail} · size unknown",
                "tokens (est.)": self.tokens, "share": f"{self.share:.1%}" if self.share is not None else "-"}


def tokens(text: str | None) -> int:
    """The estimated tokens of ``text`` (0 for none)."""
    return count_tokens(text) if text else 0


def prefix_parts(prefix: dict[str, Any]) -> list[Part]:
    """The recorded (or previewed) prefix as parts: the host's own system text, the policy, the profile, the tools."""
    parts: list[Part] = []
    policy, profile = prefix.get("policy") or "", prefix.get("profile_text")
    system = prefix.get("system_text")
    if system is not None:
        own = _host_text(system, policy, profile)
        parts.append(Part("system text (the host's own)", "recorded on the first model call", tokens(own)))
    parts.append(Part("memory-use policy", f"{prefix.get('trigger_mode') or '-'} mode", tokens(policy)))
    if prefix.get("ambient_enabled"):
        items = len(prefix.get("profile_items") or [])
        parts.append(Part("ambient profile", f"{items} item(s)", tokens(profile)))
    else:
        parts.append(Part("ambient profile", "off for this session", 0))
    offered = prefix.get("offered_tools")
    tools = offered if offered else prefix.get("memory_tools") or []
    which = "every tool offered on the first model call" if offered else "the memory tools (no model call recorded)"
    parts.append(Part("tool definitions", f"{len(tools)} tool(s) as JSON: {which}; JSON is punctuation-heavy, so "
                      "this estimate runs high",
                      tokens(json.dumps(tools, ensure_ascii=False, sort_keys=True))))
    return parts


def _host_text(system: str, policy: str, profile: str | None) -> str:
    """The system text without the adapter's prefix (the policy and profile are counted on their own)."""
    for block in (profile, policy):
        if block and block in system:
            system = system.replace(block, "", 1)
    return system.strip()


def with_shares(parts: list[Part]) -> list[Part]:
    """``parts`` with each known size's share of the known total."""
    total = sum(p.tokens for p in parts if p.tokens is not None)
    for p in parts:
        p.share = (p.tokens / total) if (p.tokens is not None and total) else (0.0 if p.tokens is not None else None)
    return parts


def total_tokens(parts: list[Part]) -> int:
    """The sum of the known sizes."""
    return sum(p.tokens for p in parts if p.tokens is not None)
