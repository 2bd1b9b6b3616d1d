"""A bounded cache of query vectors, so a repeated query is not embedded again.

Keys include the embedder's model name and version, so vectors of one model are never served
for another; entries are read-only arrays, so a caller cannot change a cached vector in place.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np


class QueryVectorCache:
    """Least-recently-used map from (model, version, text) to a unit vector; ``max_entries`` 0 disables it."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max(0, int(max_entries))
        self._items: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def cached(self, embedder, text: str) -> np.ndarray | None:
        """The cached vector of ``text`` under ``embedder``, or None (nothing is embedded)."""
        if not self.max_entries:
            return None
        key = (embedder.model_name, embedder.model_version, text)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return found

    def vector(self, embedder, text: str) -> tuple[np.ndarray, bool]:
        """The vector of ``text`` under ``embedder`` and whether it came from the cache."""
        key = (embedder.model_name, embedder.model_version, text)
        found = self.cached(embedder, text)
        if found is not None:
            return found, True
        vector = np.array(embedder.embed([text])[0], dtype=np.float32)
        vector.flags.writeable = False
        with self._lock:
            self.misses += 1
            if self.max_entries:
                self._items[key] = vector
                self._items.move_to_end(key)
                while len(self._items) > self.max_entries:
                    self._items.popitem(last=False)
        return vector, False

    def prime(self, embedder, texts) -> int:
        """Embed the distinct ``texts`` not cached yet in one batched call and cache them (a batch
        search's queries); returns how many were embedded. Nothing is embedded when the cache is off."""
        if not self.max_entries:
            return 0
        model = (embedder.model_name, embedder.model_version)
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (*model, t) not in self._items][:self.max_entries]
        if not missing:
            return 0
        vectors = np.asarray(embedder.embed(missing), dtype=np.float32)
        with self._lock:
            for text, row in zip(missing, vectors):
                vector = np.array(row, dtype=np.float32)
                vector.flags.writeable = False
                self._items[(*model, text)] = vector
                self.misses += 1
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return len(missing)

    def clear(self) -> None:
        """Forget every entry (for example after the store was re-embedded)."""
        with self._lock:
            self._items.clear()
