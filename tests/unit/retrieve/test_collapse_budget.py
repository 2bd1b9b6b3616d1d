"""Near-duplicate collapse, the token budget and the result limit."""

from memory_core.text import count_tokens

from .helpers import search, write


def _principal(service):
    service.grant("assistant", "user:alice", read=True, write=True, actor="t")
    return service.start_session(agent_id="assistant", user_id="alice")


def test_near_duplicates_collapse_into_the_better_ranked_copy(service, alice):
    fact = write(alice, "The user enjoys hiking in the Alps.", attribute="hobby")
    event = write(alice, "The user enjoys hiking in the Alps.", type="episodic")  # same text, other type: no write-time dedup
    response = search(service, alice, "hiking in the Alps")
    assert len(response.results) == 1
    kept = response.results[0].record_id
    dropped = ({fact, event} - {kept}).pop()
    collapse = response.trace.stage("collapse")
    assert collapse.dropped == [{"id": dropped, "reason": f"near-duplicate of {kept} (cosine 1.000 >= 0.95)"}]
    assert response.results[0].explanation.collapse.startswith(f"kept; absorbed near-duplicates {dropped}")
    assert response.explanation.collapsed == 1


def test_results_stop_at_the_token_budget(make_service):
    service = make_service(token_budget=60, token_overhead_per_result=10)
    alice = _principal(service)
    ids = [write(alice, f"The user collects vintage maps of region {name}.", attribute=f"maps_{name}")
           for name in ("north", "south", "east", "west")]
    response = search(service, alice, "vintage maps region", limit=10)
    cost = count_tokens("The user collects vintage maps of region north.") + 10
    assert len(response.results) == 60 // cost
    used = sum(r.explanation.tokens for r in response.results)
    assert used <= 60 and response.explanation.budget["used"] == used
    budget = response.trace.stage("budget")
    assert budget.dropped and all(d["reason"].startswith("token budget: ") for d in budget.dropped)
    assert {r.record_id for r in response.results} | {d["id"] for d in budget.dropped} == set(ids)


def test_the_limit_caps_results_with_a_reason(service, alice):
    for name in ("north", "south", "east"):
        write(alice, f"The user collects vintage maps of region {name}.", attribute=f"maps_{name}")
    response = search(service, alice, "vintage maps region", limit=1)
    assert len(response.results) == 1
    assert [d["reason"] for d in response.trace.stage("budget").dropped] == ["beyond the result limit of 1"] * 2


def test_a_single_record_longer_than_the_budget_is_truncated_not_lost(make_service):
    service = make_service(token_budget=50, token_overhead_per_result=10)
    alice = _principal(service)
    long_text = "The user described the trip itinerary: " + " ".join(f"stop{i} museum" for i in range(120))
    record_id = write(alice, long_text, type="episodic")
    response = search(service, alice, "trip itinerary museum")
    result = response.results[0]
    assert result.record_id == record_id and result.explanation.truncated
    assert result.content.endswith("…") and count_tokens(result.content) <= 40
    assert result.record.content == long_text  # the record itself is untouched
    assert result.explanation.budget.startswith("truncated: alone it needs")


def test_only_a_window_of_the_best_survivors_is_loaded(make_service):
    service = make_service(cosine_floor=0.0)
    alice = _principal(service)
    places = ["Alps", "Andes", "Urals", "Atlas", "Rockies", "Pyrenees", "Carpathians", "Dolomites", "Caucasus",
              "Himalaya", "Balkans", "Apennines", "Tatras", "Sierras"]
    for place in places:  # different enough that the write path does not merge them as duplicates
        write(alice, f"Maps: {place} trails, {place} huts and {place} passes.", attribute=f"maps_{place}")
    assert service.store.scalar("SELECT COUNT(*) FROM records") == 14
    response = search(service, alice, "maps of trails", limit=1)
    collapse = response.trace.stage("collapse")
    assert collapse.inputs["window"] == 11 and collapse.inputs["candidates"] == 11
    assert {d["reason"] for d in collapse.dropped} == {"outside the collapse window of 11"}
    assert len(collapse.dropped) == 3 and len(response.results) == 1
