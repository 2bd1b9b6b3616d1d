"""The approximate backend: a faiss inverted-file index (IVF, 8-bit scalar quantised) beside the
exact matrix, used only for large stores.

Why this shape (measured in benchmarks/README.md, "approximate index"): on this 2-core machine an
IVF index over a million 384-d vectors builds in seconds to a minute, while an HNSW graph took
many minutes; faiss applies the allowed-row bitmap inside its scan (``IDSelectorBitmap``), so a
disallowed row is never even a candidate; and it adds and skips rows cheaply.

How a search stays exact where it must:

* The exact matrix is kept. The IVF index only *proposes* rows: it is asked for
  ``overfetch * k`` rows under the bitmap of allowed live rows; each proposal is checked against
  that bitmap again and rescored with the exact float vectors, so the cosines handed on are exact
  and nothing outside the mask can come back.
* A search whose mask allows at most ``exact_below_allowed`` rows is answered by the exact scan
  (cheap at that size, and the IVF lists would hold few allowed rows anyway); so is a search where
  the IVF proposals leave fewer than ``k`` allowed rows although more exist.
* Below ``min_records`` live rows the backend is the exact backend. The IVF index is built on a
  background thread once the store reaches that size; searches stay exact until it is ready.

Every search records which way it went in :attr:`last_search` (the dense stage reports it).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from .exact import ExactBackend, fit_mask

OVERFETCH = 4  # IVF proposals per wanted result, rescored exactly


def _faiss():
    import faiss

    return faiss


class IvfBackend(ExactBackend):
    """Exact matrix plus an IVF-SQ8 proposal index over its rows (row number = faiss id)."""

    kind = "faiss-ivf-sq8"

    def __init__(
        self, dim: int, capacity: int = 1024, *, min_records: int = 200_000, exact_below_allowed: int = 50_000,
        nprobe: int = 32, background: bool = True,
    ) -> None:
        super().__init__(dim, capacity)
        self.min_records = min_records
        self.exact_below_allowed = exact_below_allowed
        self.nprobe = nprobe
        self.background = background
        self._ivf = None  # the ready index, or None
        self._ivf_rows = 0  # rows [0, _ivf_rows) are in the index
        self._building: threading.Thread | None = None
        self._build_lock = threading.Lock()
        self._dirty: set[int] = set()  # rows whose vector changed after they entered the index
        self._pending = None  # (index, rows) built on the background thread, installed by the next call
        self._loading = False
        self.last_search: dict = {"method": "exact"}
        self.build_info: dict = {}

    # -- maintenance ----------------------------------------------------------------------------

    def upsert(self, seq: int, vector: np.ndarray) -> int:
        row = self._rows.get(seq)
        if row is not None and not np.array_equal(self._matrix[row], vector):
            self._dirty.add(row)  # a re-embedded row: its IVF entry (if any) is stale until re-added
        row = super().upsert(seq, vector)
        if not self._loading:
            self._maybe_build()
        return row

    def begin_bulk(self) -> None:
        """A full load follows: build once at its end, not when the count first passes the threshold."""
        self._loading = True

    def end_bulk(self) -> None:
        self._loading = False
        self._maybe_build()

    def _maybe_build(self) -> None:
        if self._ivf is not None or self._building is not None or self._pending is not None or self.count() < self.min_records:
            return
        if self.background:
            self._building = threading.Thread(target=self.build, name="ivf-build", daemon=True)
            self._building.start()
        else:
            self.build()

    def build(self) -> None:
        """Train and fill the IVF index from the rows present now (then catch up on later rows)."""
        with self._build_lock:
            faiss = _faiss()
            size = self._size
            self._dirty.clear()  # changes from here on are re-added when the index is installed
            # A view, not a copy (1.5 GB at 1M rows): growing replaces the live array and leaves this
            # one intact, and a row rewritten meanwhile is marked dirty and re-added at install.
            matrix = self._matrix[:size]
            live = np.flatnonzero(self._alive[:size])
            # sqrt(n) lists: at 1M rows, 1,000 lists of ~1,000 rows; training and filling stay within a
            # minute on two cores (4 * sqrt(n) lists took several times longer for no recall gain
            # once proposals are over-fetched and rescored exactly).
            nlist = max(1, min(int(math.sqrt(max(live.size, 1))), live.size // 39 or 1))
            quantizer = faiss.IndexFlatIP(self.dim)
            index = faiss.IndexIVFScalarQuantizer(quantizer, self.dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                                  faiss.METRIC_INNER_PRODUCT)
            rng = np.random.default_rng(0)
            sample = live if live.size <= 64 * nlist else rng.choice(live, 64 * nlist, replace=False)
            index.train(matrix[np.sort(sample)])
            index.add_with_ids(matrix, np.arange(size, dtype=np.int64))
            self.build_info = {"nlist": nlist, "rows": size, "trained_on": int(sample.size)}
            if self.background:
                # Installed by the next search or write, which run under the index's lock; this
                # thread never touches the live state.
                self._pending = (index, size)
            else:
                self._install(index, size)

    def _install(self, index, size: int) -> None:
        # Rows appended or changed while training ran are added now (re-adding a changed row gives
        # it a second IVF entry; proposals are de-duplicated and rescored exactly, so that is safe).
        end = self._size
        if end > size:
            index.add_with_ids(self._matrix[size:end], np.arange(size, end, dtype=np.int64))
        dirty = sorted(r for r in self._dirty if r < size)
        if dirty:
            index.add_with_ids(self._matrix[dirty], np.asarray(dirty, dtype=np.int64))
        self._dirty.clear()
        self._ivf, self._ivf_rows, self._building = index, end, None

    def wait_until_built(self, timeout: float | None = None) -> bool:
        """Block until a background build finishes; True if the IVF index is ready."""
        thread = self._building
        if thread is not None:
            thread.join(timeout)
        return self._ivf is not None or self._pending is not None

    def _catch_up(self) -> None:
        if self._pending is not None:
            index, size = self._pending
            self._pending = None
            self._install(index, size)
            return
        if self._ivf is None:
            return
        if self._size > self._ivf_rows or self._dirty:
            self._install(self._ivf, self._ivf_rows)

    # -- search ---------------------------------------------------------------------------------

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        mask = self._alive[: self._size] if allowed is None else self._alive[: self._size] & fit_mask(allowed, self._size)
        allowed_rows = int(mask.sum())
        self._catch_up()
        if self._ivf is None or allowed_rows <= self.exact_below_allowed or k <= 0:
            why = ("approximate index not built" if self._ivf is None else
                   f"{allowed_rows} allowed rows <= {self.exact_below_allowed}: exact scan")
            self.last_search = {"method": "exact", "why": why, "allowed_rows": allowed_rows}
            return super().search(query, k, allowed)
        faiss = _faiss()
        bitmap = np.packbits(mask, bitorder="little")
        params = faiss.SearchParametersIVF(sel=faiss.IDSelectorBitmap(mask.size, faiss.swig_ptr(bitmap)), nprobe=self.nprobe)
        fetch = min(OVERFETCH * k, allowed_rows)
        _, ids = self._ivf.search(np.asarray(query, dtype=np.float32)[None, :], fetch, params=params)
        rows = np.unique(ids[0][ids[0] >= 0])
        rows = rows[(rows < mask.size)]
        rows = rows[mask[rows]]  # verification: the bitmap again, never trusting the index alone
        if rows.size < min(k, allowed_rows):
            self.last_search = {"method": "exact", "why": f"approximate index proposed {rows.size} allowed rows < {k}: exact scan",
                                "allowed_rows": allowed_rows}
            return super().search(query, k, allowed)
        scores = self._matrix[rows] @ query
        take = min(k, rows.size)
        top = np.argsort(-scores, kind="stable")[:take]
        self.last_search = {"method": "approximate", "index": self.kind, "nprobe": self.nprobe, "proposed": int(rows.size),
                            "allowed_rows": allowed_rows, "rescored": "exact cosine"}
        return [(int(self._seqs[rows[t]]), float(scores[t])) for t in top]


def backend_factory(min_records: int, exact_below_allowed: int, nprobe: int):
    """A ``VectorIndex`` backend factory: the IVF backend when faiss is installed, else exact."""
    try:
        _faiss()
    except ImportError:
        return ExactBackend

    def make(dim: int) -> IvfBackend:
        return IvfBackend(dim, min_records=min_records, exact_below_allowed=exact_below_allowed, nprobe=nprobe)

    return make
