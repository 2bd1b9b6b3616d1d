"""An int8 version of the packaged MiniLM: the checked fp32 ONNX file, dynamically quantised.

Quantising the weights to 8 bits makes a one-query forward pass two to three times faster on one
thread, but the vectors move (cosine about 0.9-0.97 to the fp32 ones), so it is a different model
version (``<version>-int8``): a store embedded with fp32 refuses to open with it until
``agent-memory reembed`` has re-embedded every record, and the reverse. It is made here from the
fp32 file on first use (never downloaded), cached beside it with a sidecar, and checked to stay
close to the fp32 vectors (:data:`MIN_COSINE_TO_FP32`: a broken quantisation gives unrelated
vectors). Whether it retrieves as well is a separate, measured question (benchmarks/README.md).

Dynamic quantisation picks the activations' scale per call, over every text in a batch, so the
embedder runs it one text per call (``OnnxMiniLMEmbedder``): otherwise a record written alone and
the same record re-embedded in a batch would get different vectors.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailableError
from .onnx_export import CHECK_TEXTS, EXPORT_FORMAT, _file_lock, publish_checked, sha256_file, valid_cached

INT8_SUFFIX = "-int8"
MIN_COSINE_TO_FP32 = 0.85


def int8_paths(cache_dir: Path, model_version: str, max_seq_length: int) -> tuple[Path, Path]:
    """The int8 ONNX file and its sidecar for one (fp32) model version and truncation length."""
    stem = f"minilm-{model_version}-L{max_seq_length}-f{EXPORT_FORMAT}-int8"
    return cache_dir / f"{stem}.onnx", cache_dir / f"{stem}.json"


def quantized_and_checked(fp32_path: Path, model_dir: Path, cache_dir: Path, model_version: str, max_seq_length: int, *,
                          verify_hash: bool = False) -> tuple[Path, dict]:
    """The checked int8 file made from the checked fp32 file ``fp32_path`` (made now if missing)."""
    version = model_version + INT8_SUFFIX
    onnx_path, meta_path = int8_paths(cache_dir, model_version, max_seq_length)
    meta = valid_cached(onnx_path, meta_path, version, full=verify_hash)
    if meta is not None:
        return onnx_path, meta
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbedderUnavailableError(f"making the int8 model needs onnxruntime's quantization tools: {exc}") from exc
    with _file_lock(cache_dir / ".export.lock"):
        meta = valid_cached(onnx_path, meta_path, version, full=verify_hash)
        if meta is not None:
            return onnx_path, meta
        fd, tmp_name = tempfile.mkstemp(prefix=".quantize-", suffix=".onnx", dir=cache_dir)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            try:
                quantize_dynamic(str(fp32_path), str(tmp), weight_type=QuantType.QInt8)
            except Exception as exc:  # the quantiser raises many kinds; all mean "no usable file"
                raise EmbedderUnavailableError(f"quantising the ONNX model failed: {type(exc).__name__}: {exc}") from exc
            check = compare_with_fp32(fp32_path, tmp, model_dir, max_seq_length)
            if check["min_cosine"] < MIN_COSINE_TO_FP32:
                raise EmbedderUnavailableError(
                    f"the int8 model's vectors are too far from the fp32 ones (min cosine {check['min_cosine']:.4f} "
                    f"< {MIN_COSINE_TO_FP32})", min_cosine=check["min_cosine"])
            meta = {"model_version": version, "export_format": EXPORT_FORMAT, "quantization": "dynamic int8 weights (QInt8)",
                    "source": str(fp32_path), "max_seq_length": max_seq_length, "size": tmp.stat().st_size,
                    "sha256": sha256_file(tmp), "check_against_fp32": check}
            return publish_checked(tmp, onnx_path, meta_path, meta)
        finally:
            tmp.unlink(missing_ok=True)


def compare_with_fp32(fp32_path: Path, int8_path: Path, model_dir: Path, max_seq_length: int, texts=CHECK_TEXTS) -> dict:
    """Cosine between the int8 and the fp32 vectors of ``texts``."""
    from .onnx_session import OnnxSession

    full = OnnxSession(fp32_path, model_dir, max_seq_length, threads=1).embed(list(texts))
    small = OnnxSession(int8_path, model_dir, max_seq_length, threads=1).embed(list(texts))
    small = small / np.maximum(np.linalg.norm(small, axis=1, keepdims=True), 1e-12)
    cosines = np.sum(full * small, axis=1)
    return {"texts": len(texts), "min_cosine": round(float(cosines.min()), 4), "mean_cosine": round(float(cosines.mean()), 4)}
