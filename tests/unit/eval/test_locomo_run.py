from memory_core.eval.ablation import Replay, ladder, logged_questions, replay
from memory_core.eval.gate_calibration import calibrate
from memory_core.eval.locomo import parse_conversation
from memory_core.eval.locomo_run import ask_all, build_store
from memory_core.eval.retrieval_eval import aggregate
from tests.fakes import HashingEmbedder
from tests.unit.eval.test_locomo import sample


def _conversations():
    other = sample("conv-y", ("Zed", "Yara"), questions=[
        {"question": "What boat did Zed buy?", "answer": "a sloop", "evidence": ["D1:1"], "category": 4}])
    other["conversation"]["session_1"][0]["text"] = "I bought a sloop called Petrel."
    return [parse_conversation(sample()), parse_conversation(other)]


def test_a_small_locomo_run_asks_own_and_off_topic_questions(tmp_path):
    conversations = _conversations()
    store = build_store(conversations, tmp_path / "l.sqlite", embedder=HashingEmbedder(), vector_cache=tmp_path / "v.npz",
                        progress=None)
    try:
        assert store.timings["texts_embedded"] == 6 and (tmp_path / "v.npz").exists()
        run = ask_all(store, conversations, progress=None)
        variant = ask_all(store, conversations, settings=store.service.settings.retrieval.model_copy(update={"freshness_weight": 0.0}),
                          progress=None)
    finally:
        store.service.close()
    answerable = sum(len(c.answerable()) for c in conversations)
    assert len(run["outcomes"]) == answerable and len(run["off_topic"]) == answerable and run["errors"] == 0
    assert [q.text for q, _ in run["named_off_topic"]] == ["What boat did Ann buy?"]
    assert len(variant["outcomes"]) == answerable
    assert sum(f.answerable for f in run["features"]) == answerable
    assert aggregate(run["outcomes"])["overall"]["questions"] == answerable
    assert calibrate(run["features"], [{"conv-x"}, {"conv-y"}])["recommended"]["cosine_floor"] >= 0.0
    again = build_store(conversations, tmp_path / "l2.sqlite", embedder=HashingEmbedder(), vector_cache=tmp_path / "v.npz",
                        progress=None)
    again.service.close()
    assert again.timings["vectors_from_cache"] == 6 and again.timings["texts_embedded"] == 0


def test_replaying_the_open_pass_gives_what_the_shipped_pipeline_returns(tmp_path):
    conversations = _conversations()
    store = build_store(conversations, tmp_path / "l.sqlite", embedder=HashingEmbedder(), progress=None)
    try:
        settings = store.service.settings.retrieval
        opened = ask_all(store, conversations, settings=settings.model_copy(update={"cosine_floor": -1.0, "freshness_weight": 0.0}),
                         progress=None)
        shipped = ask_all(store, conversations, progress=None)
        questions = logged_questions(store, conversations, opened)
    finally:
        store.service.close()
    _, replayed = ladder(settings)[-1]
    returned = [o.observation.rankings["full"] for o in shipped["outcomes"]]
    returned += [obs.rankings["full"] for kind in ("off_topic", "named_off_topic") for _, obs in shipped[kind]]
    assert [replay(q, replayed) for q in questions] == returned
    assert replay(questions[0], Replay(lists=("dense",))) == questions[0].lists["dense"][:10]
