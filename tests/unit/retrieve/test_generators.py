"""The lexical and dense generators on small stores."""

from .helpers import search, write


def _principal(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    return service.start_session(agent_id="assistant", user_id="alice")


PLANTS = ("roses crocuses ferns herbs basil thyme sage mint lilies daisies orchids peonies irises poppies asters dahlias "
          "lupins violets pansies cosmos zinnias marigolds begonias freesias").split()
THINGS = ("stamps coins maps vinyl comics postcards shells fossils watches cameras pens teapots clocks globes kites "
          "puzzles marbles badges tickets posters lanterns").split()


def _lexical(response):
    return response.trace.stage("lexical")


def test_lexical_scores_are_shares_of_the_query_and_cover_subject_and_alias_columns(service, alice):
    about = write(alice, "She leads the database migration.", about="Priya Raman", about_kind="person", attribute="role")
    write(alice, "The user likes tea.", attribute="drink")
    write(alice, "The user likes jazz.", attribute="music")
    lexical = _lexical(search(service, alice, "raman")).outputs["candidates"]  # only in the entity's name
    assert [c["id"] for c in lexical] == [about] and lexical[0]["lexical"] == 1.0 and lexical[0]["terms"] == ["raman"]
    partial = _lexical(search(service, alice, "raman oboe")).outputs["candidates"]  # "oboe" is held by no record
    assert [c["id"] for c in partial] == [about] and 0.0 < partial[0]["lexical"] < 1.0


def test_identifiers_match_as_phrases(service, alice):
    fix = write(alice, "PR-1234 fixed the crash in v2.3.1 of the exporter.", type="episodic")
    write(alice, "The user reviewed 1234 photos from PR week.", type="episodic")
    stage = _lexical(search(service, alice, "status of PR-1234?"))
    assert stage.inputs["terms"] == ["status", "pr 1234"]
    assert [c["id"] for c in stage.outputs["candidates"]] == [fix]
    assert {t["term"]: t["documents"] for t in stage.outputs["term_statistics"]} == {"status": 0, "pr 1234": 1}


def test_terms_in_most_readable_records_are_left_out(make_service):
    service = make_service()
    alice = _principal(service)
    for i, plant in enumerate(PLANTS[:24]):
        write(alice, f"The garden grows {plant}.", attribute=f"garden_{i}")
    tulips = write(alice, "Tulips grow by the gate.", attribute="tulips")
    stage = _lexical(search(service, alice, "garden tulips"))
    total = stage.inputs["readable_records"]
    assert total >= 20  # (the write path folds a few near-duplicates)
    assert stage.outputs["dropped_terms"] == [
        {"term": "garden", "documents": total - 1, "reason": f"in {total - 1} of {total} readable records (more than 50%)"}]
    assert [c["id"] for c in stage.outputs["candidates"]] == [tulips] and stage.outputs["candidates"][0]["lexical"] == 1.0
    everything = make_service("all.sqlite", lexical_max_df_share=1.0)
    bob = _principal(everything)
    write(bob, "The garden has tulips.", attribute="garden")
    kept = _lexical(search(everything, bob, "garden tulips"))
    assert kept.outputs["dropped_terms"] == [] and [t["term"] for t in kept.outputs["term_statistics"]] == ["garden", "tulips"]


def test_a_query_of_only_stop_words_skips_lexical_with_the_reason(service, alice):
    write(alice, "The garden has roses.", attribute="garden")
    stage = _lexical(search(service, alice, "what is it?"))
    assert stage.status == "skipped" and stage.notes == ["no searchable terms once stop words and operator syntax are removed"]


def test_dense_candidates_come_ranked_by_cosine(service, alice):
    for i, text in enumerate(["hiking boots", "hiking trails in the alps", "tax forms"]):
        write(alice, f"The user owns {text}.", attribute=f"item_{i}")
    dense = search(service, alice, "hiking trails alps").trace.stage("dense").outputs["candidates"]
    cosines = [c["cosine"] for c in dense]
    assert cosines == sorted(cosines, reverse=True) and [c["rank"] for c in dense] == [1, 2, 3]


def test_unreadable_records_never_change_the_lexical_ranking(make_service):
    service = make_service(candidates_per_generator=1, lexical_max_df_share=1.0)
    alice = _principal(service)
    service.grant("other", "user:bob", read=True, write=True, actor="t")
    bob = service.start_session(agent_id="other", user_id="bob")
    for i in range(5):  # Bob's records would rank first under FTS5's global BM25 (higher term frequency, shorter)
        write(bob, f"Tulips tulips tulips {i}.", attribute=f"tulips_{i}")
    mine = write(alice, "The user planted a few tulips beside the long winding garden path last spring.", attribute="garden")
    stage = _lexical(search(service, alice, "tulips"))
    assert [c["id"] for c in stage.outputs["candidates"]] == [mine]
    assert stage.outputs["term_statistics"][0]["documents"] == 1 and stage.inputs["readable_records"] == 1


def test_the_postings_bound_leaves_out_a_term_held_by_too_many_readable_records(make_service):
    service = make_service(lexical_max_postings=3, lexical_max_df_share=1.0)
    alice = _principal(service)
    for i in range(3):
        write(alice, f"Roses bloom in bed {i}.", attribute=f"roses_{i}")
    ferns = write(alice, "Ferns and roses share the shade.", attribute="ferns")
    stage = _lexical(search(service, alice, "roses ferns"))
    # counting stops at the bound + 1 (on PostgreSQL the postings are counted in SQL up to there)
    assert stage.outputs["dropped_terms"] == [{"term": "roses", "documents": 4, "reason": "in more than 3 readable records"}]
    assert [c["id"] for c in stage.outputs["candidates"]] == [ferns]


def test_term_statistics_follow_the_readable_store_as_it_grows(make_service):
    service = make_service()
    alice = _principal(service)
    for i, plant in enumerate(PLANTS):
        write(alice, f"The garden grows {plant}.", attribute=f"bed_{i}")
    assert _lexical(search(service, alice, "garden")).outputs["dropped_terms"][0]["term"] == "garden"
    for i, thing in enumerate(THINGS):
        write(alice, f"The user collects {thing}.", attribute=f"collects_{i}")
        write(alice, f"Every {thing} on the shelf came from a flea market.", attribute=f"shelf_{i}")
    assert _lexical(search(service, alice, "garden")).outputs["dropped_terms"] == []
