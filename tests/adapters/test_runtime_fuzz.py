"""Any arguments a model sends through an adapter runtime come back as a readable result, and a
failed call writes nothing."""

import json

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memory_core.adapters import Identity, MemoryRuntime, format_tool_result  # noqa: E402
from memory_core.adapters.base import MEMORY_TOOL_NAMES  # noqa: E402
from memory_core.adapters.script import parse_tool_text  # noqa: E402

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
arguments = st.dictionaries(
    st.sampled_from(["type", "content", "attribute", "target", "source_kind", "evidence", "query", "record_id", "action",
                     "reason", "limit", "types", "mentions", "about", "event_at"]) | st.text(max_size=12),
    json_values, max_size=6,
) | json_values


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([*MEMORY_TOOL_NAMES, "memory_delete", ""]), args=arguments,
       mode=st.sampled_from(["tool_only", "auto", "hybrid"]))
def test_fuzzed_tool_calls_return_readable_results(service, name, args, mode):
    service.grant("assistant", "user:alice", read=True, write=True, actor="test")
    runtime = MemoryRuntime(service, framework="fuzz", trigger_mode=mode)
    session = runtime.open(Identity("assistant", "alice", "ses-fuzz"))
    before = service.store.scalar("SELECT COUNT(*) FROM records")
    result = runtime.call_tool(session, name, args)
    text = format_tool_result(result)
    assert parse_tool_text(text) == json.loads(json.dumps(result, default=str)), "the JSON part reads back as the result"
    assert result.get("ok") in (True, False)
    if not result["ok"]:
        assert text.startswith(f"Error ({result['error']['code']}):")
        assert service.store.scalar("SELECT COUNT(*) FROM records") == before
    if name == "memory_search" and mode == "auto":
        assert result["error"]["code"] == "unknown_tool"
