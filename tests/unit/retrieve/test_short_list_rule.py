"""A name linking few readable records is no evidence by itself either (issue 13, design section 7)."""

from memory_core.retrieve.gate.rules import GateFloors, NameRest

from .gate_words import name_rest_check

from .helpers import search, set_status, write
from .test_gate import _principal

SHIPPED = GateFloors(0.40, 0.50, 0.40, 0.50, 0.60, short_list_names=True)


def test_the_rest_must_clear_the_floors_a_question_without_the_name_would():
    coffee = NameRest(("Alice",), 0.32, 0.0, full_cosine=0.62, cover=0.0, cover_joint=0.32, short=True)
    ok, reason = name_rest_check(coffee, SHIPPED)
    assert not ok
    assert reason == ("mentions alice, but nothing about the rest of the question (best cosine without the name 0.32 < 0.40; "
                      "with half its coverage of the other words 0.32 < 0.40; best lexical score on the other words 0.00 < 0.50)")
    formatted = NameRest(("Alice",), 0.398, 0.22, cover=0.4, cover_joint=0.598, short=True)  # "answers" is in the record
    assert name_rest_check(formatted, SHIPPED) == (True, "")
    assert name_rest_check(NameRest(("Bob",), 0.1, 0.6, short=True), SHIPPED) == (True, "")  # the other words are there
    off = GateFloors(0.40, 0.50, 0.40, 0.50, 0.60, short_list_names=False)
    assert name_rest_check(coffee, off) == (True, "")
    assert name_rest_check(NameRest(("Alice",), None, None, bare=True, short=True), SHIPPED) == (True, "")  # "who is Alice?"


def test_a_question_naming_a_person_about_something_never_stored_comes_back_empty(make_service):
    # an entity-support floor low enough that the name alone carries the set: only the short-list rule can refuse it (a
    # cosine floor of 0.6, as the tiny hashing embedder's cosines run higher than the packaged model's)
    service = make_service(cosine_floor=0.6, entity_support_cosine=0.05)
    alice = _principal(service)
    meetings = write(alice, "Alice seems to prefer morning meetings.", about="Alice", about_kind="person", attribute="meetings")
    write(alice, "Alice is preparing a board update.", about="Alice", about_kind="person", attribute="board")
    refused = search(service, alice, "How does Alice like her coffee?")
    gate = refused.trace.stage("gate").outputs
    assert refused.empty and gate["known_names"] == ["Alice"] and gate["known_names_short"] is True
    assert refused.empty_reason.startswith("mentions alice, but nothing about the rest of the question (")
    assert "the name alone matched" in refused.empty_reason
    answered = search(service, alice, "Does Alice prefer morning meetings?")
    assert answered.record_ids[0] == meetings and answered.trace.stage("gate").outputs["known_names_short"] is True
    assert not search(service, alice, "Who is Alice?").empty  # only the name: records about Alice answer it


def test_the_lifecycle_probe_does_not_send_a_refused_named_question_to_a_historical_search(make_service):
    for rule_on in (True, False):
        service = make_service(f"{rule_on}.sqlite", cosine_floor=0.6, entity_support_cosine=0.05, short_list_names_need_rest=rule_on)
        alice = _principal(service)
        old = write(alice, "Carol wants primary sources.", about="Carol", about_kind="person", attribute="sources")
        set_status(service, old, "superseded")
        write(alice, "The user lives in Lisbon.", attribute="home")
        response = search(service, alice, "What is Carol's favourite film?")
        assert response.empty
        # without the rule, the superseded record (linked to Carol, nothing about films) is offered as the reason
        assert ("historical search" in response.empty_reason) is not rule_on


def test_a_name_the_caller_gave_as_an_entity_hint_is_evidence_by_itself(make_service):
    service = make_service(cosine_floor=0.6, entity_support_cosine=0.05)
    alice = _principal(service)
    ticket = write(alice, "The flaky test lives in ticket INFRA-4821, assigned to Priya.", mentions=["Priya"], attribute="ticket")
    assert search(service, alice, "what is Priya working on").empty  # a mention of a name is not relevance ...
    hinted = search(service, alice, "what is Priya working on", entity_hints=["priya"])  # ... but the caller said it is about Priya
    assert hinted.record_ids[0] == ticket and hinted.trace.stage("gate").outputs["known_names"] == []


def test_a_name_no_record_holds_raises_the_floor_the_rest_must_clear():
    """'What is Bob's GitHub username?' asked of a memory that knows Bob but has never seen the word
    GitHub: the rest must clear the unknown-name floor, as any query naming such a thing must."""
    github = NameRest(("Bob",), 0.43, None, full_cosine=0.72, cover=0.0, cover_joint=0.43, unheld=("GitHub",), short=True)
    ok, reason = name_rest_check(github, SHIPPED)
    assert not ok
    assert reason == ("mentions bob, but nothing about the rest of the question (best cosine without the name 0.43 < 0.60; "
                      "with half its coverage of the other words 0.43 < 0.60; no record holds another word of the question; "
                      "the cosine floor is 0.6 because no readable record holds GitHub)")
    assert name_rest_check(NameRest(("Bob",), 0.43, None, cover_joint=0.43, short=True), SHIPPED) == (True, "")  # all held
    assert name_rest_check(NameRest(("Bob",), 0.65, None, unheld=("GitHub",), short=True), SHIPPED) == (True, "")
    # the lexical route is unchanged: the other words are there
    assert name_rest_check(NameRest(("Bob",), 0.1, 0.6, unheld=("GitHub",), short=True), SHIPPED) == (True, "")


def test_records_linked_to_a_short_list_name_tie_in_the_fusion_instead_of_ranking_by_recency(make_service, clock):
    """The entity list is in recency order, which says nothing about the question: the newest record
    linked to Alice used to get the list's first rank and could outrank the one that answers."""
    service = make_service()
    alice = _principal(service)
    manager = write(alice, "Sam Patel is Alice's manager.", about="Alice", about_kind="person", attribute="manager")
    for i, text in enumerate(["Alice likes long walks in the hills.", "Alice keeps her notes in a paper diary.", "Alice is away."]):
        clock.advance(days=1)
        write(alice, text, about="Alice", about_kind="person", attribute=f"other{i}")
    response = search(service, alice, "Who is Alice's manager?")
    fusion = response.trace.stage("fusion")
    assert response.record_ids[0] == manager
    assert any("entity list fused with ties" in note for note in fusion.notes)
    fused = {c["id"]: c for c in fusion.outputs["fused"]}
    assert fused[manager]["entity_rank"] == 4  # last by recency, yet first in the fused order
