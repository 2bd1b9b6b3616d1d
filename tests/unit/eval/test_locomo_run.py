from memory_core.eval.calibration import calibrate
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
    assert len(variant["outcomes"]) == answerable
    assert sum(f.answerable for f in run["features"]) == answerable
    assert aggregate(run["outcomes"])["overall"]["questions"] == answerable
    assert calibrate(run["features"])["recommended"]["cosine_floor"] >= 0.0
    again = build_store(conversations, tmp_path / "l2.sqlite", embedder=HashingEmbedder(), vector_cache=tmp_path / "v.npz",
                        progress=None)
    again.service.close()
    assert again.timings["vectors_from_cache"] == 6 and again.timings["texts_embedded"] == 0
