"""Reading one JSON object out of a model's answer (memory_core/llm/structured.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from memory_core.errors import ExternalServiceError
from memory_core.llm.anthropic_client import parse_json_reply
from memory_core.llm.structured import InvalidReply, parse_reply


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str


@pytest.mark.parametrize("text", [
    '{"query": "tea"}',
    'Here you go: {"query": "tea"} Hope that helps!',
    '```json\n{"query": "tea"}\n```',
    '<think>The user wants {"query": "coffee"}? No.</think>{"query": "tea"}',
    '{"note": "first object is not it"} then {"query": "tea"}',
    '{broken {"query": "tea"}',
])
def test_the_first_top_level_object_that_validates_is_read(text):
    assert parse_reply(text, Query) == Query(query="tea")


@pytest.mark.parametrize(("text", "reason"), [
    ("", "empty"),
    ("   \n", "empty"),
    ("I cannot help with that.", "no JSON object"),
    ('{"query": "tea"', "no complete JSON object"),
    ('{"query": 3}', "query: Input should be a valid string"),
    ('{"query": "tea", "extra": 1}', "extra: Extra inputs are not permitted"),
    ('{"wrapper": {"query": "tea"}}', "did not match the schema"),  # nested objects are not tried alone
])
def test_unusable_answers_say_why(text, reason):
    with pytest.raises(InvalidReply) as raised:
        parse_reply(text, Query)
    assert reason in raised.value.reason


def test_the_anthropic_client_reads_answers_the_same_way():
    assert parse_json_reply('Sure: ```json\n{"query": "tea"}\n```', Query) == Query(query="tea")
    with pytest.raises(ExternalServiceError) as raised:
        parse_json_reply("no json here", Query)
    assert raised.value.details["kind"] == "invalid_output"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, categories=None), max_size=300)
       | st.builds(lambda a, b: a + '{"query": ' + b, st.text(max_size=40), st.text(max_size=40)))
def test_any_text_parses_or_raises_invalid_reply(text):
    """Fuzzed answers (unicode, lone surrogates, NUL, half objects) never raise anything else."""
    try:
        result = parse_reply(text, Query)
    except InvalidReply as exc:
        assert exc.reason
    else:
        assert isinstance(result, Query)
