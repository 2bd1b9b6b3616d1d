"""Word-level support for the rest of a question that names a known entity (retrieve/rest_cover.py)."""

from memory_core.retrieve.gate import model as gate_model
from memory_core.retrieve.gate.rest_cover import key_terms
from memory_core.text import prefix_stem as stem, prefix_stems as text_stems

from .helpers import search, write
from .test_gate import _principal


def test_a_stem_is_the_first_five_letters():
    assert stem("Researching") == "resea" == stem("research")
    assert stem("run") == "run"
    stems = text_stems("Jon: I'm researching adoption agencies!")
    assert {"resea", "res", "rese", "adopt", "agenc", "jon"} <= stems and "resear" not in stems
    assert "live" in text_stems("Bob lives in Berlin.")  # a record holds "live" when a word starts with it


def test_key_terms_leave_out_names_shaping_words_numbers_and_short_words():
    terms = ["jon", "kind", "research", "2023", "go", "favorite", "adoption", "pr 1234"]
    assert key_terms(terms, {"jon"}) == ["research", "adoption"]


def _speaker_store(make_service, **overrides):
    # candidates_per_generator 2: the speaker's records fill the entity list, as a LoCoMo speaker's hundreds do
    service = make_service(cosine_floor=0.05, lexical_floor=1.0, candidates_per_generator=2, **overrides)
    alice = _principal(service)
    write(alice, "Jon is researching adoption agencies.", about="Jon", about_kind="person", attribute="research")
    write(alice, "Jon went hiking with his dog.", about="Jon", about_kind="person", attribute="hiking")
    write(alice, "Jon bought a red bicycle.", about="Jon", about_kind="person", attribute="bike")
    return service, alice


def test_the_gate_logs_stem_coverage_and_the_share_of_the_rest_held(make_service):
    service, alice = _speaker_store(make_service)
    gate = search(service, alice, "What did Jon research?").trace.stage("gate").outputs
    assert gate["known_names"] == ["Jon"]
    assert gate["rest_held"] == 1.0  # "research" is held by stem ("researching")
    assert gate["best_rest_cover"] == 1.0
    covered = [c for c in gate["candidates"] if c["rest_cover"] == 1.0]
    assert len(covered) == 1 and gate["best_rest_cover_joint"] >= 0.5
    assert set(gate["name_model"]["features"]) == set(gate_model.FEATURES)
    absent = search(service, alice, "What is Jon's blood type?").trace.stage("gate").outputs
    assert absent["rest_held"] == 0.0 and absent["best_rest_cover"] == 0.0  # nothing stored says "blood"


def test_the_word_signals_make_a_question_about_something_never_stored_less_likely_to_pass(make_service):
    # a model that weighs only the share of the rest held: anything else stays at the bias
    weights = [-1.0, 0, 0, 0, 0, 0, 0, 0, 0, 3.0]
    service, alice = _speaker_store(make_service, name_model_floor=0.5, name_model_weights=weights)
    assert not search(service, alice, "What did Jon research?").empty
    refused = search(service, alice, "What is Jon's blood type?")
    assert refused.empty and refused.empty_reason.startswith("mentions jon, but the rest of the question finds too little support")
    assert "other words held in memory 0.00" in refused.empty_reason


def test_a_stem_held_only_in_a_record_the_searcher_cannot_read_counts_as_not_held(make_service):
    service, alice = _speaker_store(make_service)
    bob = _principal(service, "bob")
    write(bob, "Jon is studying marine biology.", about="Jon", about_kind="person", attribute="study")
    write(bob, "Jon plays chess on Sundays.", about="Jon", about_kind="person", attribute="chess")
    gate = search(service, alice, "What did Jon study?").trace.stage("gate").outputs
    assert gate["known_names"] == ["Jon"] and gate["rest_held"] == 0.0  # bob's "studying" is not alice's memory
    seen = search(service, bob, "What did Jon study?").trace.stage("gate").outputs
    assert seen["known_names"] == ["Jon"] and seen["rest_held"] == 1.0


def test_an_older_weights_setting_of_six_signals_still_reads(make_service):
    service, alice = _speaker_store(make_service, name_model_floor=0.5, name_model_weights=[-5.0, 3.0, 0, 0, 0, 0, 0])
    response = search(service, alice, "What is Jon's blood type?")
    assert response.empty and "other words held in memory" not in response.empty_reason


def test_stems_fold_case_and_diacritics_as_the_full_text_index_does():
    assert stem("Café") == stem("cafe") == "cafe"
    assert "crepe" in text_stems("Crêpes at the café")


def test_odd_words_in_the_rest_of_a_named_question_never_break_the_search(make_service):
    service, alice = _speaker_store(make_service)
    for query in ("What did Jon's Ñandú café ☕ do?", "Jon \\'s O'Reilly \"quoted\"* NEAR(x) résumé?", "Jon 日本語 研究",
                  "Jon " + "x" * 300, "Jon's ' '' \\\\ %s {0}"):
        gate = search(service, alice, query).trace.stage("gate").outputs
        assert gate["rest_held"] is None or 0.0 <= gate["rest_held"] <= 1.0
