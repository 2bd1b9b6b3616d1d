"""What the extraction runner is given instead of the service: explicit, typed parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..clock import Clock
from ..index.vector_index import VectorIndex
from ..ingest.evidence import Entailment
from ..ingest.writer import WriteOutcome, WriteRequest
from ..llm import LanguageModel
from ..llm.factory import RoleModels
from ..policy.grants import AccessResolver, ScopeAccess
from ..settings import ExtractionSettings, HousekeepingSettings
from ..store.db import Store
from ..telemetry import NO_TELEMETRY, Telemetry
from .context import SearchFunction


class EntailmentJudge(Protocol):
    """The entailment judge (offline or hosted): does ``quote`` support ``content``?"""

    def judge(self, quote: str, content: str) -> Entailment: ...


WriteFunction = Callable[[WriteRequest, ScopeAccess], WriteOutcome]


@dataclass
class ExtractionDeps:
    """Everything a run needs: the store and index, the write path, access, models and settings.

    ``write`` and ``search`` are functions (the service passes its own ``ingestor.write`` and
    ``search``), so a test can swap one part without building a service around it.
    """

    store: Store
    clock: Clock
    index: VectorIndex
    settings: ExtractionSettings
    access: AccessResolver
    write: WriteFunction
    judge: EntailmentJudge
    llm: LanguageModel | None = None  # the Anthropic client; used for both roles when ``models`` is not given
    models: RoleModels | None = None  # the extractor's and the reviewer's clients, chosen from settings
    search: SearchFunction | None = None
    housekeeping: HousekeepingSettings | None = None  # log retention run by the worker's maintenance pass
    telemetry: Telemetry = NO_TELEMETRY  # one span per attempt when the host traces (telemetry/spans.py)
