"""One scripted conversation, framework-neutral: user turns, each with the model's replies.

It exercises both write paths: explicit tool writes (a user statement, a tool result, a revision
that supersedes, a forget) and session-end extraction (statements the model did not save).
Replies that need an id returned earlier are functions of the request.
"""

from __future__ import annotations

from memory_core.adapters.script import Call, Say

ORDER_EVIDENCE = "Order 4411 shipped on 2026-03-04 by courier Rapidex."


def _found(request, word):
    """The id of the first result of this turn's memory_search whose content has ``word`` (CrewAI
    starts each kickoff with fresh messages, so only this turn's tool results are visible)."""
    for result in request.tool_results("memory_search"):
        for item in result.get("results", []) if isinstance(result, dict) else []:
            if word in item["content"]:
                return item["id"]
    raise AssertionError(f"the scripted search found no record mentioning {word!r}")


def _revise_style(request):
    return Call(("memory_revise", {
        "action": "update", "record_id": _found(request, "concise"), "content": "The user prefers detailed answers with examples.",
        "source_kind": "user_statement", "evidence": "I now prefer detailed answers with examples",
        "reason": "the user changed their preference",
    }))


def _forget_pet(request):
    return Call(("memory_forget", {"record_id": _found(request, "Miso"), "reason": "the user asked to forget it"}))


CONVERSATION = [
    ("Hi! I prefer concise answers, and my timezone is CET.", [
        Call(("memory_write", {"type": "semantic", "content": "The user prefers concise answers.", "attribute": "answer_style",
                               "source_kind": "user_statement", "evidence": "I prefer concise answers"})),
        Say("Got it: concise answers."),
    ]),
    ("Where is order 4411?", [
        Call(("lookup_order", {"order_id": "4411"})),
        Call(("memory_write", {"type": "semantic", "content": "Order 4411 was shipped by courier Rapidex.", "attribute": "order_4411_courier",
                               "source_kind": "tool_result", "evidence": ORDER_EVIDENCE})),
        Say("It shipped on 4 March with Rapidex."),
    ]),
    ("Actually, I now prefer detailed answers with examples.", [
        Call(("memory_search", {"query": "concise answers"})),
        _revise_style,
        Say("Understood: detailed answers with examples from now on."),
    ]),
    ("My cat is called Miso.", [
        Call(("memory_write", {"type": "semantic", "content": "The user's cat is called Miso.", "attribute": "cat_name",
                               "source_kind": "user_statement", "evidence": "My cat is called Miso"})),
        Say("Miso is a lovely name."),
    ]),
    ("Please forget my cat's name. My favourite editor is Helix.", [
        Call(("memory_search", {"query": "cat called Miso"})),
        _forget_pet,
        Say("Done, I've forgotten it."),
    ]),
]


def play(harness, conversation=CONVERSATION):
    """Play ``conversation`` through a harness and end the session; returns the extraction run id."""
    for text, replies in conversation:
        harness.user_turn(text, list(replies))
    return harness.end()
