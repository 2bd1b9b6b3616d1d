"""Backups, snapshots, health checks and maintenance: the upkeep half of the
:class:`~memory_core.service.MemoryService` facade (``store.backup``, ``store.doctor``,
``index.reembed``, ``memory_core.maintenance``), behind ``agent-memory snapshot / restore / doctor /
reembed / maintain`` and the admin app's health page.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..clock import Clock
from ..index.reembed import reembed_store
from ..maintenance import run_maintenance
from ..settings import Settings
from ..store.backup import backup_store, restore_into
from ..store.db import Store
from ..store.doctor import DoctorReport, run_doctor


class UpkeepMethods:
    """Copies of the store, its checks, re-embedding and the maintenance pass."""

    # Provided by MemoryService.
    store: Store
    settings: Settings
    clock: Clock
    index: object
    embedder: object
    _check_embedder: Callable[[bool], None]  # refuses a snapshot embedded by another model

    # -- backups, snapshots and health (store.backup, store.doctor) -----------------------------

    def snapshot(self, path: str | Path, *, overwrite: bool = False) -> dict:
        """A consistent copy of the store at ``path`` (online; agents may keep writing)."""
        return backup_store(self.store.path, path, overwrite=overwrite).to_dict()

    def restore(self, path: str | Path, *, allow_empty: bool = False) -> dict:
        """Replace this store's content with the snapshot at ``path`` (checked first; one without
        records only with ``allow_empty``) and reload the vector index."""
        info = restore_into(self.store, path, allow_empty=allow_empty)
        self._check_embedder(False)
        self.index.rebuild()
        return info.to_dict()

    def doctor(self) -> DoctorReport:
        """Integrity, FTS, vector, change-feed and orphan checks plus log sizes (``agent-memory doctor``)."""
        return run_doctor(self.store, self.settings, dim=self.embedder.dim)

    # -- maintenance --------------------------------------------------------------------------

    def reembed(self, *, actor: str, batch_size: int = 256, progress=None) -> int:
        """Re-embed every non-deleted record with the configured embedder (the explicit migration)."""
        return reembed_store(self.store, self.index, self.embedder, self.clock, actor=actor, batch_size=batch_size, progress=progress)

    def run_maintenance(self, *, actor: str = "maintenance") -> dict:
        """Expire unreinforced provisional records and flag due reviews; returns the ids changed."""
        return run_maintenance(self.store, self.index, self.clock, self.settings.extraction.maintenance_batch_size,
                               actor=actor, housekeeping=self.settings.housekeeping).to_dict()
