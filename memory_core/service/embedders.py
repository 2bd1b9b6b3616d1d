"""One loaded embedder per configuration per process, so the model stays warm across services."""

from __future__ import annotations

import functools
import threading

from ..embed import build_embedder
from ..settings import EmbedderSettings

_embedder_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _cached_embedder(key: str):
    return build_embedder(EmbedderSettings.model_validate_json(key))


def shared_embedder(settings: EmbedderSettings):
    """The process-wide embedder for ``settings`` (built on first use)."""
    with _embedder_lock:
        return _cached_embedder(settings.model_dump_json())
