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
* With a :attr:`IvfBackend.persistence` file (:mod:`.ann_file`), that thread first tries the index
  saved by an earlier process (brought up to date from the change feed) and trains a new one only
  when the file is missing, stale or corrupt; a newly trained index is saved for the next open.

Every search records which way it went in :attr:`last_search` (the dense stage reports it).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Callable

import numpy as np

from .ann_file import AnnFile, AnnFileError
from .exact import ExactBackend, fit_mask

log = logging.getLogger(__name__)

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
        self.persistence: AnnFile | None = None  # set by VectorIndex when the index is kept in a file
        self.rows_version: Callable[[], int] | None = None  # the change-feed version the rows reflect

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
        """Train and fill the IVF index from the rows present now (then catch up on later rows),
        or load it from the persisted file when that is valid."""
        with self._build_lock:
            began = time.perf_counter()
            # Read before the rows: a change after this version may already be in the rows (it is
            # then applied twice when the file is next loaded, which is harmless), never missed.
            version = self.rows_version() if self.rows_version is not None else 0
            size = self._size
            self._dirty.clear()  # changes from here on are re-added when the index is installed
            # A view, not a copy (1.5 GB at 1M rows): growing replaces the live array and leaves this
            # one intact, and a row rewritten meanwhile is marked dirty and re-added at install.
            matrix = self._matrix[:size]
            seqs = self._seqs[:size].copy()
            alive = self._alive[:size].copy()
            index = self._from_file(matrix, seqs, alive, version) if self.persistence is not None else None
            if index is None:
                index = self._train(matrix, alive, size)
                self.build_info["build_s"] = round(time.perf_counter() - began, 2)
                self._save(index, seqs, version)
            if self.background:
                # Installed by the next search or write, which run under the index's lock; this
                # thread never touches the live state.
                self._pending = (index, size)
            else:
                self._install(index, size)

    def _train(self, matrix: np.ndarray, alive: np.ndarray, size: int):
        faiss = _faiss()
        live = np.flatnonzero(alive)
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
        self.build_info = {"nlist": nlist, "rows": size, "trained_on": int(sample.size), "from_file": False}
        return index

    def _save(self, index, seqs: np.ndarray, version: int) -> None:
        if self.persistence is None:
            return
        began = time.perf_counter()
        try:
            self.persistence.save(index, seqs, version)
            self.build_info["save_s"] = round(time.perf_counter() - began, 2)
        except OSError as exc:  # a read-only directory or a full disk: the index still works, unsaved
            log.warning("could not save the approximate index to %s: %s", self.persistence.path, exc)

    def _from_file(self, matrix: np.ndarray, seqs: np.ndarray, alive: np.ndarray, version: int):
        """The persisted index brought up to the rows present now, or None (then train anew)."""
        began = time.perf_counter()
        assert self.persistence is not None
        try:
            loaded = self.persistence.load()
        except (AnnFileError, OSError) as exc:
            log.warning("the approximate index file %s is unusable (%s); building a new one", self.persistence.path, exc)
            self.persistence.discard(f"unusable: {exc}")
            return None
        if loaded is None:
            return None
        faiss = _faiss()
        index = loaded.index
        if not isinstance(index, faiss.IndexIVF) or index.d != self.dim:
            self.persistence.discard("not an IVF index of this dimension")
            return None
        try:
            changes = self.persistence.changes_since(int(loaded.header["records_version"]))
        except Exception as exc:  # noqa: BLE001 - e.g. the store was closed while this thread ran
            log.info("approximate index file not used: the change feed could not be read (%s)", exc)
            return None
        if changes.stale or changes.deleted.size:
            self.persistence.discard(changes.stale or "records were forgotten since it was written")
            return None
        size = seqs.size
        if size == 0:
            return None
        # The file's rows are numbered as its writer loaded them; map each to this process's row of
        # the same record (rows of records that are gone are removed from the index).
        order = np.argsort(seqs, kind="stable")
        ordered = seqs[order]
        pos = np.minimum(np.searchsorted(ordered, loaded.seqs), size - 1)
        found = ordered[pos] == loaded.seqs
        mapping = np.where(found, order[pos], -1)
        found &= alive[np.maximum(mapping, 0)]
        gone = np.flatnonzero(~found)
        if gone.size:
            index.remove_ids(faiss.IDSelectorBatch(gone.astype(np.int64)))
        _renumber(index, np.where(found, mapping, -1))
        covered = np.zeros(size, dtype=bool)
        covered[mapping[found]] = True
        # Rows the file lacks, and rows whose record changed since (perhaps its vector), are added
        # from the exact matrix; an updated row's old entry stays as a duplicate proposal, which is
        # harmless (proposals are de-duplicated and rescored exactly).
        need = np.flatnonzero(alive & (~covered | np.isin(seqs, changes.upserted)))
        if need.size > size // 2:  # mostly new rows: train on them instead
            return None
        if need.size:
            index.add_with_ids(matrix[need], need.astype(np.int64))
        self.build_info = {"nlist": int(index.nlist), "rows": size, "from_file": True, "added": int(need.size),
                           "removed": int(gone.size), "load_s": round(time.perf_counter() - began, 2)}
        self.persistence.last_event = {"loaded": True, "added": int(need.size), "removed": int(gone.size)}
        if need.size + gone.size > max(1000, size // 100):  # worth saving again for the next open
            self._save(index, seqs, version)
        return index

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
        allowed_rows = int(np.count_nonzero(mask))
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


def _renumber(index, mapping: np.ndarray) -> None:
    """Rewrite the ids stored in ``index``'s inverted lists through ``mapping`` (old id -> new id)."""
    faiss = _faiss()
    lists = index.invlists
    for number in range(index.nlist):
        count = lists.list_size(number)
        if count:
            ids = faiss.rev_swig_ptr(lists.get_ids(number), count)
            ids[:] = mapping[ids]


def backend_factory(min_records: int, exact_below_allowed: int, nprobe: int):
    """A ``VectorIndex`` backend factory: the IVF backend when faiss is installed, else exact."""
    try:
        _faiss()
    except ImportError:
        return ExactBackend

    def make(dim: int) -> IvfBackend:
        return IvfBackend(dim, min_records=min_records, exact_below_allowed=exact_below_allowed, nprobe=nprobe)

    return make
