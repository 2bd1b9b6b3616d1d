"""The known-name model of the gate and the fusion's name-stripped list."""

import math

import pytest
from hypothesis import given, strategies as st

from memory_core.retrieve.gate import model as gate_model
from memory_core.retrieve.gate.rules import Evidence, GateFloors, NameRest

from .gate_words import gate_set, name_rest_check

from .helpers import search, write
from .test_gate import _principal

# bias, rest cosine, rest lexical, rest joint, cosine, lexical, every name held: support for the rest counts most
WEIGHTS = (-7.0, 8.0, 3.0, 2.0, 1.0, 1.0, 1.0)
MODEL = GateFloors(0.4, 0.5, 0.4, 0.5, 0.6, name_model_floor=0.5, name_model_weights=WEIGHTS)


def test_the_probability_is_a_logistic_of_the_weighted_features():
    assert gate_model.probability(WEIGHTS, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)) == pytest.approx(1 / (1 + math.exp(7.0)))
    z = -7.0 + 8 * 0.5 + 3 * 0.2 + 2 * 0.6 + 0.7 + 0.3 + 1.0
    assert gate_model.probability(WEIGHTS, (0.5, 0.2, 0.6, 0.7, 0.3, 1.0)) == pytest.approx(1 / (1 + math.exp(-z)))
    assert gate_model.probability(WEIGHTS, (None, None, None, 0.7, None, 1)) == gate_model.probability(WEIGHTS, (0, 0, 0, 0.7, 0, 1))
    assert gate_model.probability((-1000.0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0)) == 0.0  # no overflow either way
    assert gate_model.probability((1000.0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0)) == 1.0
    with pytest.raises(ValueError):
        gate_model.probability((1.0, 2.0), (0.1,))


@given(st.lists(st.floats(-1, 1), min_size=6, max_size=6), st.integers(0, 5), st.floats(0, 0.5))
def test_more_support_never_lowers_the_probability_with_positive_weights(values, which, more):
    raised = list(values)
    raised[which] += more
    assert gate_model.probability(WEIGHTS, raised) >= gate_model.probability(WEIGHTS, values)


def test_rest_both_adds_half_the_lexical_score():
    assert gate_model.rest_both(0.4, 0.6) == pytest.approx(0.7)
    assert gate_model.rest_both(0.4, None) == 0.4
    assert gate_model.rest_both(None, 0.6) is None


def test_the_model_refuses_a_set_whose_only_link_is_the_name_and_says_why():
    strong = [Evidence(0.62, 0.2, ("Alice",), 0.0)]  # "Alice prefers morning meetings" for a question about coffee
    rest = NameRest(("Alice",), 0.21, 0.0, both=0.21, full_cosine=0.62, full_lexical=0.2)
    first, reason = gate_set(strong, MODEL, rest)
    assert first is None
    p = gate_model.probability(WEIGHTS, rest.model_values())
    assert reason == (f"mentions alice, but the rest of the question finds too little support (known-name model: p {p:.2f} < 0.50 "
                      "from cosine without the name 0.21, lexical on the other words 0.00, joint 0.21, best cosine 0.62, "
                      "best lexical 0.20, every name held 1); the name alone matched (cosine 0.62 >= floor 0.40)")
    supported = NameRest(("Alice",), 0.55, 0.5, both=0.8, full_cosine=0.62, full_lexical=0.5)
    assert gate_set(strong, MODEL, supported) == (0, "cosine 0.62 >= floor 0.40")


def test_a_name_no_readable_record_holds_lowers_the_probability():
    held = NameRest(("Sam",), 0.45, 0.3, both=0.6, full_cosine=0.55, full_lexical=0.3)
    unheld = NameRest(("Sam",), 0.45, 0.3, both=0.6, full_cosine=0.55, full_lexical=0.3, unheld=("Disney",))
    names_held = gate_model.FEATURES.index("names_held")
    assert held.model_values()[names_held] == 1.0 and unheld.model_values()[names_held] == 0.0
    assert gate_model.probability(WEIGHTS, unheld.model_values()) < gate_model.probability(WEIGHTS, held.model_values())


def test_the_model_leaves_bare_and_jointly_linked_names_alone_and_can_be_turned_off():
    assert name_rest_check(NameRest(("Alice",), None, None, bare=True), MODEL) == (True, "")
    assert name_rest_check(NameRest(("Alice", "Bob"), 0.0, 0.0, joint="mem_1"), MODEL) == (True, "")
    off = GateFloors(0.4, 0.5, 0.4, 0.5, 0.6, name_model_floor=-1.0, name_model_weights=WEIGHTS)
    assert name_rest_check(NameRest(("Alice",), 0.0, 0.0), off) == (True, "")  # both the model and the two floors off
    assert not off.name_rule_on and MODEL.name_rule_on


def test_shipped_settings_carry_a_model_of_the_right_shape():
    from memory_core.settings import RetrievalSettings, load_settings

    s = load_settings().retrieval
    assert len(s.name_model_weights) == len(gate_model.FEATURES) + 1 and -1.0 < s.name_model_floor < 1.0
    assert GateFloors.of(s).name_model_weights == tuple(s.name_model_weights)
    with pytest.raises(ValueError):
        RetrievalSettings(name_model_weights=[1.0, 2.0])


def _priya_store(make_service, **overrides):
    # candidates_per_generator 2: Priya's records fill the entity list, as a speaker's hundreds do
    service = make_service(cosine_floor=0.05, lexical_floor=1.0, candidates_per_generator=2, **overrides)
    alice = _principal(service)
    write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    meetings = write(alice, "Priya seems to prefer morning meetings.", about="Priya", about_kind="person", attribute="meetings")
    return service, alice, meetings


def test_a_search_naming_a_known_person_about_something_never_stored_is_empty_under_the_model(make_service):
    service, alice, meetings = _priya_store(make_service, name_model_floor=0.5, name_model_weights=list(WEIGHTS))
    response = search(service, alice, "How does Priya like her answers formatted?")
    gate = response.trace.stage("gate").outputs
    assert response.empty and gate["known_names"] == ["Priya"]
    assert gate["name_model"]["probability"] < 0.5 and gate["name_model"]["floor"] == 0.5
    assert set(gate["name_model"]["features"]) == set(gate_model.FEATURES)
    assert response.empty_reason.startswith("mentions priya, but the rest of the question finds too little support (known-name model: p ")
    answered = search(service, alice, "Does Priya prefer morning meetings?")
    assert answered.record_ids[0] == meetings
    assert answered.trace.stage("gate").outputs["name_model"]["probability"] >= 0.5


def test_the_name_stripped_list_joins_the_fusion_only_for_a_full_entity_list(make_service):
    service, alice, meetings = _priya_store(make_service)
    response = search(service, alice, "Does Priya prefer morning meetings?")
    fusion = response.trace.stage("fusion")
    assert "name_stripped" in fusion.inputs["fused_lists"] and meetings in fusion.outputs["name_stripped"]
    assert any(note.startswith('name-stripped list fused: the candidates ordered by cosine to "Does prefer morning meetings?"')
               for note in fusion.notes)
    top = response.results[0].explanation
    assert top.generators["name_stripped"]["rank"] >= 1 and top.generators["name_stripped"]["cosine"] is not None
    # one embedding of the stripped question serves the fusion and the gate
    gate = response.trace.stage("gate").outputs
    assert gate["best_rest_cosine"] == max(c["rest_cosine"] for c in gate["candidates"] if c["rest_cosine"] is not None)
    off = make_service("off.sqlite", cosine_floor=0.05, lexical_floor=1.0, candidates_per_generator=2, rest_list_in_fusion=False)
    other = _principal(off)
    write(other, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    write(other, "Priya seems to prefer morning meetings.", about="Priya", about_kind="person", attribute="meetings")
    assert "name_stripped" not in search(off, other, "Does Priya prefer morning meetings?").trace.stage("fusion").inputs["fused_lists"]


def test_a_name_linking_few_records_adds_no_name_stripped_list(make_service):
    service = make_service(cosine_floor=0.05, lexical_floor=1.0)
    alice = _principal(service)
    write(alice, "The flaky test lives in ticket INFRA-4821, assigned to Priya.", mentions=["Priya"], attribute="ticket")
    response = search(service, alice, "what is Priya working on")
    assert "name_stripped" not in response.trace.stage("fusion").inputs["fused_lists"]
    assert not response.empty


def test_the_lifecycle_probe_does_not_blame_lifecycle_for_a_question_the_known_name_check_refused(make_service):
    from .helpers import set_status

    # a model no cosine satisfies: the known-name check refuses every question naming Priya
    service, alice, meetings = _priya_store(make_service, name_model_floor=0.5, name_model_weights=[-5.0, 3.0, 0, 0, 0, 0, 0])
    old = write(alice, "Priya used to take her coffee black.", about="Priya", about_kind="person", attribute="coffee")
    set_status(service, old, "superseded")
    response = search(service, alice, "How does Priya take her coffee?")
    assert response.empty
    assert response.empty_reason.startswith("mentions priya, but the rest of the question finds too little support")
    assert response.trace.stage("gate").outputs["known_names"] == ["Priya"]


@pytest.mark.parametrize("query", [
    "Priya's?", "PRIYA!!! ☕ coffee?", "what about priya", "Priya Priya Priya", "Does Priya like C++ or A.I.?",
    "¿Qué piensa Priya del café?", "Priya\u200b's tea", "Priya — ", "\"Priya\" OR NOT coffee*", "Priya ${x} %s {0}",
])
def test_odd_questions_naming_a_known_entity_never_break_the_search(make_service, query):
    service, alice, _ = _priya_store(make_service)
    response = search(service, alice, query)
    gate = response.trace.stage("gate").outputs
    if response.empty and gate.get("known_names"):
        assert response.empty_reason.startswith("mentions priya, but the rest of the question finds too little support")
    if "name_model" in gate:
        assert 0.0 <= gate["name_model"]["probability"] <= 1.0
    assert response.to_tool_result()  # the tool's view of it serialises
