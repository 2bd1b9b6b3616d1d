from datetime import timedelta

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.eval.ingest import ingest_conversation
from memory_core.eval.locomo import parse_conversation
from memory_core.eval.retrieval_eval import VIEWS, QuestionOutcome, aggregate, gate_features, observe, off_topic_summary
from tests.fakes import HashingEmbedder
from tests.unit.eval.test_locomo import sample


def _store(tmp_path):
    conv = parse_conversation(sample())
    clock = FixedClock("2023-01-01T00:00:00Z")
    service = MemoryService.open(tmp_path / "m.sqlite", load_settings(extraction={"extract_on_session_end": False}),
                                 clock=clock, embedder=HashingEmbedder())
    ingest = ingest_conversation(service, conv, clock)
    service.grant("reader", "user:conv-x", read=True, actor="test")
    clock.set(conv.last_at + timedelta(days=1))
    return service, conv, ingest


def test_every_stage_ranking_is_read_back_from_the_search_log(tmp_path):
    service, conv, ingest = _store(tmp_path)
    try:
        session = service.start_session(agent_id="reader", user_id="conv-x")
        reply = session.call_tool("memory_search", {"query": "Ann adopted a cat", "limit": 10})
        assert reply["ok"]
        obs = observe(service, reply["search_id"])
        assert set(obs.rankings) == set(VIEWS)
        assert obs.rankings["full"] == [r["id"] for r in reply["results"]]
        assert obs.rankings["dense"] and obs.best_cosine is not None
        assert obs.entity_matches >= 1  # "Ann" is the speaker entity of her turns
        question = conv.questions[0]
        outcome = QuestionOutcome.score(question, obs, ingest.covers)
        assert outcome.scores["full"]["recall@10"] == 1.0
        table = aggregate([outcome])
        assert table["overall"]["questions"] == 1 and table["overall"]["full"]["hit@10"] == 1.0
        assert "4:single-hop" in table
        features = gate_features(question.qid, True, obs)
        assert features.answerable and features.entity_cosine is not None and features.kind == "answerable"
    finally:
        service.close()


def test_an_unreadable_user_gives_an_empty_logged_answer(tmp_path):
    service, conv, ingest = _store(tmp_path)
    try:
        session = service.start_session(agent_id="reader", user_id="someone-else")
        reply = session.call_tool("memory_search", {"query": "Ann adopted a cat"})
        obs = observe(service, reply["search_id"])
        assert obs.empty and obs.empty_reason
        assert off_topic_summary([obs])["correct_empty"] == 1.0
    finally:
        service.close()


def test_search_log_entry_exposes_generators_gate_inputs_and_every_mentioned_id(tmp_path):
    from memory_core.eval.search_log_reader import SearchLogEntry

    service, conv, ingest = _store(tmp_path)
    try:
        session = service.start_session(agent_id="reader", user_id="conv-x")
        reply = session.call_tool("memory_search", {"query": "Ann adopted a cat"})
        entry = SearchLogEntry.from_row(service.store.query_one("SELECT * FROM search_log WHERE id = ?", (reply["search_id"],)))
        assert [c["id"] for c in entry.generator("dense")]
        assert entry.best_scores()["best_cosine"] is not None
        assert set(entry.result_ids) <= entry.mentioned_ids()
    finally:
        service.close()
