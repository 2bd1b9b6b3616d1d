"""The codec of the store's JSON columns: compact JSON text (:func:`dumps`), compressed JSON for
large repetitive columns such as a search's trace (:func:`dumps_compressed`), and :func:`loads`,
which reads both. Both backends store the same bytes. (Re-exported by :mod:`.db`.)
"""

from __future__ import annotations

import json
import zlib
from typing import Any


def dumps(value: Any) -> str:
    """Compact JSON for stored columns, keeping non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


COMPRESSED_JSON = b"Z1"  # prefix of a zlib-compressed JSON column (search_log.trace before issue 16's follow-up)
LZ4_JSON = b"L4"  # prefix of an LZ4-compressed JSON column (search_log.trace)


def dumps_compressed(value: Any) -> bytes:
    """Compact JSON, compressed, for large repetitive columns; :func:`loads` reads it back.

    LZ4 when installed: a search's 30 KB trace compresses in about 0.015 ms against zlib's 0.14 ms
    (rows come out about a sixth larger). zlib otherwise; :func:`loads` reads both.
    """
    data = _fast_json(value)
    if _lz4 is not None:
        return LZ4_JSON + _lz4.compress(data, store_size=True)
    return COMPRESSED_JSON + zlib.compress(data, 1)


def _as_json_would(value: Any) -> Any:
    # orjson hands these to us (the passthrough options); give back what json.dumps(default=str)
    # writes for them, so both encoders store the same values.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return str(value)


def _fast_json(value: Any) -> bytes:
    """UTF-8 compact JSON of ``value`` with the values :func:`dumps` writes.

    The search log's trace is about 30 KB of JSON per search; orjson encodes it in a tenth of the
    standard library's time (0.03 vs 0.33 ms at 1K records). It may spell a float differently
    (``0.00001`` for ``1e-05``: the same number when read back) and writes NaN as null; anything it
    refuses (an integer beyond 64 bits) goes through the standard encoder.
    """
    if _orjson is not None:
        try:
            return _orjson.dumps(value, default=_as_json_would, option=_ORJSON_OPTIONS)
        except TypeError:
            pass
    return dumps(value).encode()


try:  # optional speed-ups (requirements.txt installs both); zlib and the standard encoder otherwise
    import lz4.block as _lz4
except ImportError:  # pragma: no cover - depends on the environment
    _lz4 = None

try:
    import orjson as _orjson

    _ORJSON_OPTIONS = (_orjson.OPT_NON_STR_KEYS | _orjson.OPT_PASSTHROUGH_SUBCLASS | _orjson.OPT_PASSTHROUGH_DATETIME
                       | _orjson.OPT_PASSTHROUGH_DATACLASS)
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None
    _ORJSON_OPTIONS = 0


def loads(value: str | bytes | None, default: Any = None) -> Any:
    """Decode a JSON column (plain text, or bytes written by :func:`dumps_compressed`)."""
    if value is None or value == "" or value == b"":
        return default
    if isinstance(value, bytes):
        if value.startswith(COMPRESSED_JSON):
            value = zlib.decompress(value[len(COMPRESSED_JSON):])
        elif value.startswith(LZ4_JSON):
            if _lz4 is None:
                raise RuntimeError("this column is LZ4-compressed and the lz4 package is not installed")
            value = _lz4.decompress(value[len(LZ4_JSON):])
        return json.loads(value)
    return json.loads(value)
