"""Bulk writes, export and import: the service methods behind ``agent-memory export`` / ``import``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ingest.batch import DEFAULT_BATCH_SIZE, BatchItemResult, write_many
from ..ingest.write_types import WriteRequest
from ..policy.grants import ScopeAccess


class PortableMethods:
    """Many records in, many records out, through the write path and the grants."""

    ingestor: object  # provided by MemoryService

    def write_many(self, requests: Sequence[WriteRequest], access: ScopeAccess | Sequence[ScopeAccess], *,
                   batch_size: int = DEFAULT_BATCH_SIZE, dry_run: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> list[BatchItemResult]:
        """Write many records with every rule of :meth:`write`: one embedding call and one transaction
        per ``batch_size`` requests; a refused request is reported in its result and writes nothing,
        a crash rolls its whole batch back (``memory_core.ingest.batch``)."""
        return write_many(self.ingestor, requests, access, batch_size=batch_size, dry_run=dry_run, progress=progress)
