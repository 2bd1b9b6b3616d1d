"""The lexical and dense generators on small stores."""

from .helpers import search, write


def _principal(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    return service.start_session(agent_id="assistant", user_id="alice")


def test_lexical_scores_are_positive_and_cover_subject_and_alias_columns(service, alice):
    about = write(alice, "She leads the database migration.", about="Priya Raman", about_kind="person", attribute="role")
    write(alice, "The user likes tea.", attribute="drink")
    write(alice, "The user likes jazz.", attribute="music")
    response = search(service, alice, "raman")  # only in the entity's name, not in the content
    lexical = response.trace.stage("lexical").outputs["candidates"]
    assert [c["id"] for c in lexical] == [about] and lexical[0]["bm25"] > 0


def test_identifiers_match_as_phrases(service, alice):
    fix = write(alice, "PR-1234 fixed the crash in v2.3.1 of the exporter.", type="episodic")
    write(alice, "The user reviewed 1234 photos from PR week.", type="episodic")
    response = search(service, alice, "status of PR-1234?")
    stage = response.trace.stage("lexical")
    assert stage.inputs["fts_expression"] == '"status" OR "pr 1234"'
    assert [c["id"] for c in stage.outputs["candidates"]] == [fix]


def test_terms_in_most_records_are_left_out_of_the_expression(make_service):
    service = make_service()
    alice = _principal(service)
    for topic in ("roses", "tulips", "ferns", "herbs"):
        write(alice, f"The garden has {topic} near the garden wall.", attribute=f"garden_{topic}")
    response = search(service, alice, "garden tulips")
    stage = response.trace.stage("lexical")
    assert stage.inputs["fts_expression"] == '"tulips"'
    assert stage.inputs["dropped_terms"] == [{"term": "garden", "documents": 4, "reason": "in 4 of 4 records (more than 50%)"}]
    everything = make_service("all.sqlite", lexical_max_df_share=1.0)
    bob = _principal(everything)
    write(bob, "The garden has tulips.", attribute="garden")
    kept = search(everything, bob, "garden tulips").trace.stage("lexical")
    assert kept.inputs["fts_expression"] == '"garden" OR "tulips"' and kept.inputs["dropped_terms"] == []


def test_a_query_of_only_common_or_stop_words_skips_lexical_with_the_reason(service, alice):
    write(alice, "The garden has roses.", attribute="garden")
    stage = search(service, alice, "what is it?").trace.stage("lexical")
    assert stage.status == "skipped" and stage.notes == ["no searchable terms once stop words and operator syntax are removed"]
    stage = search(service, alice, "garden").trace.stage("lexical")
    assert stage.status == "skipped" and stage.notes == ["every query term is too common to search"]


def test_dense_candidates_come_ranked_by_cosine(service, alice):
    for i, text in enumerate(["hiking boots", "hiking trails in the alps", "tax forms"]):
        write(alice, f"The user owns {text}.", attribute=f"item_{i}")
    dense = search(service, alice, "hiking trails alps").trace.stage("dense").outputs["candidates"]
    cosines = [c["cosine"] for c in dense]
    assert cosines == sorted(cosines, reverse=True) and [c["rank"] for c in dense] == [1, 2, 3]


def test_lexical_falls_back_to_the_exact_join_when_the_prefetch_is_all_unreadable(make_service):
    service = make_service(candidates_per_generator=1, lexical_max_df_share=1.0)
    alice = _principal(service)
    service.grant("other", "user:bob", read=True, write=True, actor="t")
    bob = service.start_session(agent_id="other", user_id="bob")
    for i in range(5):  # Bob's records rank higher for "tulips" (higher term frequency, shorter)
        write(bob, f"Tulips tulips tulips {i}.", attribute=f"tulips_{i}")
    mine = write(alice, "The user planted a few tulips beside the long winding garden path last spring.", attribute="garden")
    lexical = search(service, alice, "tulips").trace.stage("lexical").outputs["candidates"]
    assert [c["id"] for c in lexical] == [mine]


def test_the_postings_bound_leaves_out_the_most_common_term_first(make_service):
    service = make_service(lexical_max_postings=3, lexical_max_df_share=1.0)
    alice = _principal(service)
    for i in range(3):
        write(alice, f"Roses bloom in bed {i}.", attribute=f"roses_{i}")
    write(alice, "Ferns and roses share the shade.", attribute="ferns")
    stage = search(service, alice, "roses ferns").trace.stage("lexical")
    assert stage.inputs["fts_expression"] == '"ferns"'
    assert stage.inputs["dropped_terms"][0]["term"] == "roses"


def test_term_statistics_follow_the_store_as_it_grows(service, alice):
    write(alice, "The garden has tulips.", attribute="garden")
    assert search(service, alice, "garden").trace.stage("lexical").inputs["fts_expression"] is None
    for i, thing in enumerate(["jazz records", "old maps", "board games"]):
        write(alice, f"The user collects {thing}.", attribute=f"collects_{i}")
    assert search(service, alice, "garden").trace.stage("lexical").inputs["fts_expression"] == '"garden"'
