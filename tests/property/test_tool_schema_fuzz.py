"""The five tools' schemas against their handlers (issue 24): what a schema admits, the handler accepts;
what it refuses, the handler refuses with a structured error and writes nothing.

The schema is the one a model is given (``session.tool_schemas()``: the session's write targets,
the bounds from the settings). It is checked with the ``jsonschema`` validator, reading ``$`` as
JSON Schema does (ECMA-262: the end of the string, not before a final newline as in Python's ``re``).
Arguments are drawn from each property's own schema: values at and around its bounds, with and
without surrounding whitespace, numbers as strings, booleans as numbers, whole floats, odd unicode,
and values of every other type. An admitted call may still be refused for what no JSON schema can
say (a record that does not exist or may not be changed, or a rule between two fields): those
refusals are listed below, each by its message, and any other refusal of an admitted call fails.
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

TOOL_NAMES = ("memory_search", "memory_get", "memory_write", "memory_revise", "memory_forget")

# Refusals of schema-valid calls that depend on the store or on two fields together.
CROSS_FIELD = {
    "memory_write": [
        r"procedure is only for type 'procedural'", r"only a procedural record has a procedure",
        r"a procedural record needs a name", r"valid_until is before valid_from",
    ],
    "memory_revise": [
        r"^(update|confirm) needs record_id$", r"^update needs the corrected content$",
        r"^merge_entities needs source_entity_id and target_entity_id$", r"valid_until is before valid_from",
    ],
    "memory_search": [r"^time_from is after time_to$", r"^as_of_mode needs as_of ", r"^historical and as_of cannot be combined",
                      r"^as_of \S+ is in the future \(now "],
    "memory_get": [],
    "memory_forget": [],
}
STATE_CODES = {"not_found", "permission_denied", "policy_refused", "conflict"}
# A pattern can say what a timestamp looks like, not that 2026-02-30 is no day.
NO_SUCH_DATE = r"not a date or time within the years 1-9999"
_SEEDED: dict[int, list[str]] = {}


def _ecma_pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not re.search(pattern.replace("$", r"\Z"), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


SchemaValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})

JUNK = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=8), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
ODD = ["", " ", "\n", "\t", "\u200b", "\u3000", "\x1c", "\ufeff", "\x00", "\u202e", "\U0001F3B7", "é\u0301", "٣", "1"]
WHITESPACE = st.sampled_from([" ", "\n", "\t", "\r", "\u3000", "\x1c", "\ufeff", "\x85", "\u00a0"])


def _pad(core: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A value, or the same value with whitespace before or after it."""
    return st.one_of(core, st.tuples(core, WHITESPACE).map("".join), st.tuples(WHITESPACE, core).map("".join))


def _timestamps() -> st.SearchStrategy[str]:
    moments = st.datetimes(min_value=__import__("datetime").datetime(1, 1, 2), max_value=__import__("datetime").datetime(9999, 12, 30))
    formats = st.sampled_from(["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%S",
                               "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S+02:00", "%Y-%m-%dt%H:%M:%S-0530", "%Y%m%d", "%d/%m/%Y"])
    good = st.tuples(moments, formats).map(lambda mf: mf[0].strftime(mf[1]).rjust(len(mf[0].strftime(mf[1])), "0"))
    return st.one_of(_pad(good), st.sampled_from(["next Tuesday", "2026-02-30", "2026-13-01", "1e3", "2026-03-05T25:00"]))


def _text(base: dict) -> st.SearchStrategy[str]:
    low, high = base.get("minLength", 0), base.get("maxLength", 200)
    lengths = st.sampled_from(sorted({0, 1, 2, low, max(low - 1, 0), high - 1, high, high + 1, min(high, 30)}))
    fill = st.sampled_from(["a", "x y", " ", "é", "\U0001F3B7", "\n"])
    sized = st.tuples(lengths, fill).map(lambda lf: (lf[1] * lf[0])[: lf[0]] if lf[0] else "")
    return st.one_of(sized, st.sampled_from(ODD), _pad(st.text(st.characters(codec="utf-8"), min_size=1, max_size=20)))


def _ids(known: list[str]) -> st.SearchStrategy[str]:
    core = st.one_of(st.sampled_from(known + ["mem_0123abcd4567ef89", "ent_x", "a" * 64, "a" * 65, "mem_1:2", "mem 1"]),
                     st.from_regex(r"[A-Za-z0-9_-]{1,70}", fullmatch=True))
    return _pad(core)


def values_for(prop: dict, known_ids: list[str]) -> st.SearchStrategy:
    typed = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    base = typed[0] if typed else prop
    options: list[st.SearchStrategy] = [JUNK]
    if "enum" in base:
        options += [st.sampled_from(base["enum"]), _pad(st.sampled_from(base["enum"])), st.sampled_from([v.upper() for v in base["enum"]])]
    elif base.get("type") == "string":
        pattern = base.get("pattern", "")
        if pattern.startswith("^[0-9]{4}"):
            options.append(_timestamps())
        elif pattern.startswith("^[A-Za-z0-9"):
            options.append(_ids(known_ids))
        else:
            options.append(_text(base))
    elif base.get("type") == "integer":
        low, high = base.get("minimum", 0), base.get("maximum", 100)
        edge = [low - 1, low, low + 1, high - 1, high, high + 1, 0, -1]
        options += [st.sampled_from(edge), st.sampled_from([float(e) for e in edge] + [2.5, True, False]),
                    st.sampled_from([str(e) for e in edge])]
    elif base.get("type") == "boolean":
        options.append(st.sampled_from([True, False, 0, 1, "true", "false", None]))
    elif base.get("type") == "array":
        item = values_for(base.get("items", {}), known_ids)
        options.append(st.lists(item, max_size=min(base.get("maxItems", 5), 6)))
        if "maxItems" in base:
            options.append(st.lists(st.just("a"), min_size=base["maxItems"], max_size=base["maxItems"] + 1))
    elif base.get("type") == "object":
        options.append(arguments(base, known_ids))
    return st.one_of(options)


def valid_for(prop: dict, known_ids: list[str]) -> st.SearchStrategy:
    """Values meant to be admitted (the schema decides): in range, of the right type and shape."""
    typed = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    base = typed[0] if typed else prop
    if "enum" in base:
        return st.sampled_from(base["enum"])
    kind = base.get("type")
    if kind == "string":
        pattern = base.get("pattern", "")
        if pattern.startswith("^[0-9]{4}"):
            return _timestamps()
        if pattern.startswith("^[A-Za-z0-9"):
            return st.one_of(st.sampled_from(known_ids or ["mem_x"]), st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True))
        low, high = max(base.get("minLength", 1), 1), base.get("maxLength", 200)
        return st.one_of(st.integers(low, min(high, 40)).map(lambda n: "a" * n), st.just("b" * high),
                         st.text(st.characters(codec="utf-8"), min_size=1, max_size=30).map(lambda t: " " + t + "z"))
    if kind == "integer":
        low, high = base.get("minimum", 0), base.get("maximum", 100)
        return st.one_of(st.integers(low, high), st.integers(low, high).map(float))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        low, high = base.get("minItems", 0), min(base.get("maxItems", 5), 6)
        return st.lists(valid_for(base.get("items", {}), known_ids), min_size=low, max_size=max(low, high))
    if kind == "object":
        return arguments(base, known_ids, mode="valid")
    return JUNK


@st.composite
def arguments(draw, schema: dict, known_ids: list[str], mode: str | None = None) -> dict:
    """Arguments for one call: every field valid, or one field (or every field) drawn from anything."""
    props = schema.get("properties", {})
    required = list(schema.get("required", []))
    chosen = set(draw(st.lists(st.sampled_from(sorted(props)), max_size=len(props)))) | set(required) if props else set()
    args = {name: draw(valid_for(props[name], known_ids)) for name in sorted(chosen)}
    mode = mode or draw(st.sampled_from(["valid", "valid", "one", "one", "any"]))
    if mode == "one" and args:
        name = draw(st.sampled_from(sorted(args)))
        args[name] = draw(values_for(props[name], known_ids))
    elif mode == "any":
        args = {name: draw(values_for(props[name], known_ids)) for name in args}
        if draw(st.booleans()):
            args["surprise"] = draw(JUNK)
        if required and draw(st.booleans()):
            args.pop(draw(st.sampled_from(required)), None)
    return args


def counts(service) -> tuple:
    return tuple(service.store.scalar(f"SELECT COUNT(*) FROM {t}") for t in ("records", "entities", "events", "grants"))


def admitted_refusal_is_allowed(name: str, error: dict) -> bool:
    if error["code"] in STATE_CODES:
        return True
    return error["code"] == "invalid_input" and any(re.search(p, error["message"]) for p in [*CROSS_FIELD[name], NO_SUCH_DATE])


@pytest.mark.parametrize("name", TOOL_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_what_the_schema_admits_the_handler_accepts_and_what_it_refuses_is_refused(alice, name, data):
    service = alice.service
    schema = next(s for s in alice.tool_schemas() if s["name"] == name)["input_schema"]
    validator = SchemaValidator(schema)
    if id(service) not in _SEEDED:  # one record the id fields can name (hypothesis reuses the fixture)
        seed = alice.call_tool("memory_write", {"type": "semantic", "content": "The user likes green tea."})
        _SEEDED[id(service)] = [seed["record_id"]]
    known = _SEEDED[id(service)]
    args = data.draw(arguments(schema, known), label="arguments")
    admitted = validator.is_valid(args)
    before = counts(service)
    result = alice.call_tool(name, json.loads(json.dumps(args)) if _json_safe(args) else args)
    json.dumps(result)  # a model can read every answer
    if admitted:
        if not result["ok"]:
            assert admitted_refusal_is_allowed(name, result["error"]), (args, result)
    else:
        assert result["ok"] is False and result["error"]["code"] == "invalid_input" and result["error"]["message"], (args, result)
        assert counts(service)[:2] == before[:2]  # nothing written (a refusal is logged, not stored)


def _json_safe(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("name,arguments,field", [
    ("memory_search", {"query": "tea", "limit": True}, "limit"),
    ("memory_search", {"query": "tea", "limit": "3"}, "limit"),
    ("memory_search", {"query": "tea", "historical": 1}, "historical"),
    ("memory_search", {"query": "tea", "time_from": "2026-03-05\n"}, "time_from"),
    ("memory_get", {"record_id": "mem_0123abcd4567ef89\n"}, "record_id"),
    ("memory_write", {"type": "semantic", "content": "The user likes tea.", "event_at": "2026-03-05 "}, "event_at"),
    ("memory_write", {"type": "semantic", "content": "   "}, "content"),
    ("memory_write", {"type": "semantic", "content": 5}, "content"),
    ("memory_forget", {"record_id": "mem_0123abcd4567ef89", "reason": " \n "}, "reason"),
])
def test_the_inconsistencies_of_issue_24_are_refused_with_the_field_named(alice, name, arguments, field):
    result = alice.call_tool(name, arguments)
    assert result["ok"] is False and result["error"]["code"] == "invalid_input"
    assert field in {p["field"] for p in result["error"]["details"]["problems"]}


def test_memory_write_advertises_the_content_bound_it_enforces(alice):
    schema = next(s for s in alice.tool_schemas() if s["name"] == "memory_write")["input_schema"]["properties"]
    limit = alice.service.settings.write.max_content_chars
    assert schema["content"]["maxLength"] == limit
    assert schema["evidence"]["anyOf"][0]["maxLength"] == alice.service.settings.write.max_evidence_chars
    assert alice.call_tool("memory_write", {"type": "semantic", "content": "a" * limit})["ok"]
    refused = alice.call_tool("memory_write", {"type": "semantic", "content": "a" * (limit + 1)})
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_input"


def test_a_whole_number_sent_as_a_float_is_that_number(alice):
    assert alice.call_tool("memory_search", {"query": "tea", "limit": 3.0})["ok"]
    assert alice.call_tool("memory_search", {"query": "tea", "limit": 2.5})["ok"] is False
