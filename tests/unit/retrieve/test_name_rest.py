"""The known-name rule of the gate: a question naming a known entity needs support for the rest of it."""

import math

from memory_core.retrieve.gate.rules import Evidence, GateFloors, NameRest
from memory_core.retrieve.generate.name_stripped import known_names_in_query, strip_names

from .gate_words import gate_set, name_rest_check

from .helpers import search, write
from .test_gate import _principal

ALICE = {"id": "ent_1", "name": "Alice", "kind": "person", "matched": "alice"}
SMITH = {"id": "ent_2", "name": "Alice Smith", "kind": "person", "matched": "alice smith"}
FLOORS = GateFloors(0.4, 0.5, 0.4, 0.5, 0.6, name_rest_cosine=0.3, name_rest_lexical=0.6)


def test_names_are_stripped_with_their_possessive_and_longest_first():
    assert strip_names("How does Alice like her answers formatted?", [ALICE]) == "How does like her answers formatted?"
    assert strip_names("what is ALICE's favourite tea", [ALICE]) == "what is favourite tea"
    assert strip_names("Where does Alice Smith work?", [ALICE, SMITH]) == "Where does work?"
    assert strip_names("Malice aforethought", [ALICE]) == "Malice aforethought"  # whole words only


def test_a_query_of_names_and_stop_words_has_no_rest():
    assert strip_names("Alice?", [ALICE]) is None
    assert strip_names("what about alice", [ALICE]) is None


def test_only_names_spelled_in_the_query_count():
    assert known_names_in_query("how is alice doing", [ALICE]) == ["Alice"]
    assert known_names_in_query("how is the project doing", [ALICE]) == []  # matched through a hint


def test_the_rest_of_the_question_decides_when_a_known_name_is_mentioned():
    strong = [Evidence(0.62, 0.2, ("Alice",), 0.0)]  # "Alice prefers morning meetings" for a question about coffee
    first, reason = gate_set(strong, FLOORS, NameRest(("Alice",), 0.21, 0.0))
    assert first is None
    assert reason == ("mentions alice, but nothing about the rest of the question (best cosine without the name 0.21 < 0.30; "
                      "best lexical score on the other words 0.00 < 0.60); the name alone matched (cosine 0.62 >= floor 0.40)")
    assert gate_set(strong, FLOORS, NameRest(("Alice",), 0.35, 0.0)) == (0, "cosine 0.62 >= floor 0.40")
    assert gate_set(strong, FLOORS, NameRest(("Alice",), None, 0.7))[0] == 0  # lexical support is enough
    assert gate_set(strong, FLOORS, None)[0] == 0  # no known name in the query: the floors alone
    off = GateFloors(0.4, 0.5, 0.4, 0.5, 0.6)  # the rule off (name_rest_cosine -inf)
    assert gate_set(strong, off, NameRest(("Alice",), 0.0, 0.0))[0] == 0


def test_a_question_that_is_only_the_name_is_about_the_name():
    assert name_rest_check(NameRest(("Alice",), None, None, bare=True), FLOORS) == (True, "")  # "who is Alice?"
    ok, why = name_rest_check(NameRest(("Alice", "Bob"), 0.1, None), GateFloors(0.4, 0.5, 0.4, 0.5, name_rest_cosine=0.3))
    assert not ok and why == ("mentions alice, bob, but nothing about the rest of the question "
                              "(best cosine without the name 0.10 < 0.30; no record holds another word of the question)")
    assert math.isinf(GateFloors(0.4, 0.5, 0.4, 0.5).name_rest_cosine)


def test_a_search_naming_a_known_person_about_something_never_stored_is_empty(make_service):
    """'How does Priya like her answers formatted?' against records about Priya's meetings and role."""
    # candidates_per_generator 2: Priya's two records fill the entity list, as a speaker's hundreds do
    service = make_service(cosine_floor=0.05, lexical_floor=1.0, name_model_floor=-1.0, name_rest_cosine=0.5, name_rest_lexical=0.5, candidates_per_generator=2)
    alice = _principal(service)
    write(alice, "Priya leads the Atlas migration.", about="Priya", about_kind="person", attribute="role")
    meetings = write(alice, "Priya seems to prefer morning meetings.", about="Priya", about_kind="person", attribute="meetings")
    response = search(service, alice, "How does Priya like her answers formatted?")
    gate = response.trace.stage("gate").outputs
    assert response.empty and gate["known_names"] == ["Priya"] and gate["best_rest_cosine"] < 0.5
    assert response.empty_reason.startswith("mentions priya, but nothing about the rest of the question (best cosine without the name ")
    assert "the name alone matched (cosine " in response.empty_reason
    answered = search(service, alice, "Does Priya prefer morning meetings?")  # the rest finds the record
    assert answered.record_ids[0] == meetings
    assert answered.trace.stage("gate").outputs["best_rest_lexical"] >= 0.5
    who = search(service, alice, "Who is Priya?")  # only the name: records about Priya answer it
    assert not who.empty and who.trace.stage("gate").outputs["known_names"] == []


def test_a_name_linking_few_records_is_judged_by_the_short_list_rule_not_the_full_list_rule(make_service):
    """The two-floor rule and the model are for names that link too many records to point at one (a
    full entity list); a name linking few records is judged by the short-list rule (issue 13: a
    mention of a name is not relevance), or, with that rule off, counts as evidence by itself."""
    for rule_on in (True, False):
        service = make_service(f"{rule_on}.sqlite", cosine_floor=0.05, lexical_floor=1.0, name_model_floor=-1.0,
                               name_rest_cosine=0.99, name_rest_lexical=1.0, short_list_names_need_rest=rule_on)
        alice = _principal(service)
        write(alice, "The flaky test lives in ticket INFRA-4821, assigned to Priya.", mentions=["Priya"], attribute="ticket")
        gate = search(service, alice, "what is Priya working on").trace.stage("gate").outputs
        assert gate["passed"]  # at a cosine floor of 0.05 the rest of the question clears it (the rule of two floors is not used)
        assert gate["known_names"] == (["Priya"] if rule_on else []) and gate["known_names_short"] is rule_on


def test_without_a_known_name_the_rule_costs_nothing(make_service):
    service = make_service(cosine_floor=0.05, lexical_floor=1.0, name_model_floor=-1.0, name_rest_cosine=0.99)
    alice = _principal(service)
    write(alice, "The user prefers morning meetings.", attribute="meetings")
    response = search(service, alice, "when are the meetings?")
    gate = response.trace.stage("gate").outputs
    assert not response.empty and gate["known_names"] == [] and gate["best_rest_cosine"] is None


def _emeka_and_helix(service, linking: str):
    """A principal whose memory links ``linking`` to both Emeka and Helix, and one record to each alone."""
    alice = _principal(service)
    both = write(alice, linking, mentions=["Emeka", "Helix"], attribute="call")
    write(alice, "Emeka likes tea.", mentions=["Emeka"], attribute="tea")
    write(alice, "Helix ships in May.", mentions=["Helix"], attribute="ship")
    return alice, both


def test_two_names_that_a_record_links_together_are_a_specific_match(make_service):
    """'What did the user discuss with Emeka about Helix?': the names are the question."""
    service = make_service(cosine_floor=0.05, lexical_floor=1.0, name_model_floor=-1.0, name_rest_cosine=0.99, name_rest_lexical=1.0, candidates_per_generator=2)
    alice, both = _emeka_and_helix(service, "Talked budgets with Emeka for Helix.")
    response = search(service, alice, "What did the user discuss with Emeka about Helix?")
    gate = response.trace.stage("gate").outputs
    assert not response.empty and gate["names_linked_together_by"] == both and gate["known_names"] == []
    one = search(service, alice, "What did the user discuss with Emeka about the weather?")  # one name: the rule judges it
    assert one.empty and one.empty_reason.startswith("mentions emeka, but nothing about the rest of the question")


def test_a_record_linking_two_names_exempts_the_set_only_when_it_is_strong_on_its_own(make_service):
    """'When did Alice join Northwind?' against a record that links both names and shares nothing
    else with the question: two mentions, not an answer; the names are judged as for one name."""
    service = make_service(cosine_floor=0.95, lexical_floor=1.0, entity_support_cosine=0.05, name_model_floor=-1.0,
                           name_rest_cosine=0.99, name_rest_lexical=1.0, candidates_per_generator=2)
    alice, both = _emeka_and_helix(service, "Product lead for Atlas here at Northwind.")
    response = search(service, alice, "When did Emeka join Helix?")
    gate = response.trace.stage("gate").outputs
    assert gate["names_linked_together_by"] is None and sorted(gate["known_names"]) == ["Emeka", "Helix"]
    assert response.empty and response.empty_reason.startswith("mentions ")
    assert both not in response.record_ids
