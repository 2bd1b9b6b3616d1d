"""Does a quote support a candidate's content? The configured entailment judge, asked twice.

Extracted content is written in the third person ("The user lives in Oslo.") while the quote is
usually first person ("I live in Oslo."). The judge is asked about the quote as said and, when it
starts in the first person, about the same quote read in the third person (a grammatical
rewrite that adds no claim); either answer being yes counts, the second only when the words
alone decide it. Polarity and number checks apply to both.
"""

from __future__ import annotations

from ..ingest.evidence import Entailment
from ..text import has_negation
from .offline_rules import as_third_person


def supports(judge, quote: str, content: str) -> Entailment:
    """The judge's verdict on ``quote`` entailing ``content`` (see the module docstring)."""
    first = judge.judge(quote, content)
    if first.entailed:
        return first
    rewritten = as_third_person(quote)
    if rewritten is None or rewritten == quote or has_negation(rewritten) != has_negation(quote):
        return first
    second = judge.judge(rewritten, content)
    # Only a lexical yes counts for the rewrite: it makes quote and content look alike, so an
    # embedding tie-break would be too generous ("lives in Oslo" vs "lives in Bergen").
    if second.entailed and second.cosine is None:
        second.reason = f"read in the third person ({rewritten!r}): {second.reason}"
        return second
    return first
