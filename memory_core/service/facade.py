"""The host API: :class:`MemoryService` wires the components of one store and delegates to them.

Hosts, adapters, the admin app, notebooks and tests all go through this facade::

    service = MemoryService.open("var/memory.sqlite")
    service.grant("assistant", "user:alice", read=True, write=True, actor="host")
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", "Please keep answers concise.")
    session.call_tool("memory_write", {...})
    session.end()

It builds its parts explicitly in ``__init__`` (vector index, entailment judge, write path,
lifecycle, retriever, and the agent tools from :func:`memory_core.tools.build_tools` unless a surface
is passed in) and holds the opening, grants, sessions, search and inspection. The other methods sit
in mixins by concern: records' writes and lifecycle (``record_methods``), upkeep (``upkeep_methods``:
backups, doctor, re-embedding, maintenance), the admin app's reads (``admin_methods``), extraction,
ambient profiles and bulk import/export. No SQL lives here: grants are in ``policy.grants``,
sessions in ``store.sessions``, counts in ``store.overview``, extraction runs in ``extract.runs``.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

from .. import display
from ..clock import Clock, SystemClock, format_ts
from ..errors import EmbedderMismatchError, InvalidInputError, NotFoundError, PolicyError, StoreUnusableError
from ..extract.runner import ExtractionRunner
from ..ids import new_id
from ..inputs import check_text
from ..index.ann import backend_factory
from ..index.pg_vector import PgVectorIndex
from ..index.vector_index import VectorIndex
from ..ingest.evidence import ModelEntailmentJudge, OfflineEntailmentJudge
from ..ingest.lifecycle import Lifecycle
from ..ingest.writer import Ingestor
from ..llm.anthropic_client import build_llm
from ..llm.factory import RoleModels, build_role_models
from ..policy.grants import ScopeAccess, access_of, check_grantable, delete_grant, list_grants, save_grant
from ..policy.scopes import parse_scope, private_scope, validate_id
from ..retrieve.request import SearchRequest
from ..retrieve.retriever import Retriever
from ..retrieve.search_types import SearchResponse
from ..settings import Settings, load_settings
from ..store import inspection, overview, sessions
from ..store.backend import open_store
from ..store.db import Store
from ..store.opening import damage_guard
from ..store.transfer import refuse_unfinished_copy
from ..store.records import Record
from ..telemetry import Telemetry, spans
from ..tools import build_tools
from .admin_methods import AdminMethods
from .ambient_methods import AmbientMethods
from .app_entries import AppEntryMethods
from .embedders import shared_embedder
from .extraction_methods import ExtractionMethods
from .portable_methods import PortableMethods
from .record_methods import RecordMethods
from .session import Session
from .tool_surface import ToolSurface
from .upkeep_methods import UpkeepMethods


class MemoryService(RecordMethods, ExtractionMethods, AmbientMethods, AdminMethods, PortableMethods, UpkeepMethods,
                    AppEntryMethods):
    """A memory store opened for use: SQLite, vector index, embedder, write path, retriever and tools."""

    def __init__(self, store: Store, settings: Settings, clock: Clock, embedder, *, llm=None,
                 models: RoleModels | None = None, tools: ToolSurface | None = None, tracer_provider=None) -> None:
        self.store = store
        # spans go to ``tracer_provider``, else to the host's global OpenTelemetry provider (docs/observability.md)
        self.telemetry = Telemetry(settings.telemetry, tracer_provider, store_id=spans.store_id(str(store.path)))
        self.settings = settings
        self.clock = clock
        self.embedder = embedder
        self.llm = llm  # the Anthropic client (None without a key); each role's client is in self.models
        self.models = models if models is not None else build_role_models(settings, anthropic=llm)
        r = settings.retrieval  # the approximate backend only engages above r.ann_min_records rows
        if store.backend == "postgresql":  # dense search runs in the database (pgvector)
            pg = settings.postgres
            self.index = PgVectorIndex(store, embedder.dim, pg.ann_min_records, pg.ivf_probes, pg.exact_max_rows,
                                       kind=pg.ann_index, ef_search=pg.hnsw_ef_search, dense_search=pg.dense_search,
                                       matrix_max_records=pg.matrix_max_records)
            store.erase_delay_s = pg.erase_delay_s
        else:
            self.index = VectorIndex(store, embedder.dim, backend_factory(r.ann_min_records, r.ann_exact_below_allowed, r.ann_nprobe))
            self.index.keep_ann_file({"model": embedder.model_name, "model_version": embedder.model_version, "kind": "faiss-ivf-sq8"},
                                     save=r.ann_persist and not store.read_only)
            self.index.keep_vector_file({"model": embedder.model_name, "model_version": embedder.model_version},
                                        min_records=r.vector_file_min_records, use=r.vector_file, write=not store.read_only)
        offline_judge = OfflineEntailmentJudge(embedder.embed, settings.write.entailment_min_coverage, settings.write.entailment_min_cosine)
        self.judge = (
            ModelEntailmentJudge(self.models.entailment, offline_judge)
            if self.models.entailment is not None
            else offline_judge
        )
        self.ingestor = Ingestor(store, self.index, embedder, self.judge, settings.write, clock, self.telemetry)
        self.lifecycle = Lifecycle(store, self.index, settings.write, clock, settings.housekeeping, self.telemetry)
        self.retriever = Retriever(
            store=store, index=self.index, embedder=embedder, clock=clock, access=self.access,
            settings=lambda: self.settings.retrieval, llm=self.models.rewrite, telemetry=self.telemetry,
        )
        self.tools: ToolSurface = tools if tools is not None else build_tools()  # the agent tools (a host may pass its own)
        self._extraction: ExtractionRunner | None = None

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        settings: Settings | None = None,
        *,
        clock: Clock | None = None,
        embedder=None,
        llm=None,
        models: RoleModels | None = None,
        allow_embedder_mismatch: bool = False,
        read_only: bool = False,
        tracer_provider=None,
        tools: ToolSurface | None = None,
        pooled: bool = False,
    ) -> "MemoryService":
        """Create or migrate the store at ``path`` and load the configured embedder.

        Refuses (EmbedderMismatchError) a store whose rows were embedded by another model unless
        ``allow_embedder_mismatch`` is set, which only :meth:`reembed` should need. A damaged file,
        an SQLite database that is not a store, or the target of an unfinished ``migrate-store``
        raises :class:`~memory_core.errors.StoreUnusableError` naming the file and what to do.
        ``read_only`` opens an existing, current store without writing anything to it (nothing is
        created or migrated; any write fails): for commands that only look. ``tracer_provider`` is
        the OpenTelemetry provider the service's spans go to (default: the host's global one);
        ``tools`` the tool surface sessions offer (default: :func:`memory_core.tools.build_tools`).
        ``pooled`` (PostgreSQL; for a process serving many sessions at once) gives its threads a pool
        of ``postgres.pool_min_size``..``pool_max_size`` connections instead of one shared connection.
        """
        settings = settings or load_settings()
        clock = clock or SystemClock()
        if llm is None:
            llm = build_llm(settings.anthropic)
        if models is None:  # before the store and the embedder: a misconfigured model fails fast
            models = build_role_models(settings, anthropic=llm)
        store = open_store(path, format_ts(clock.now()), read_only=read_only)
        if pooled and store.backend == "postgresql":
            try:
                store.use_pool(settings.postgres.pool_min_size, settings.postgres.pool_max_size)
            except BaseException:
                store.close()
                raise
        guard = damage_guard(store.path) if store.backend == "sqlite" else nullcontext()
        try:
            with guard:
                refuse_unfinished_copy(store)
                if read_only and store.pending_migrations:
                    raise StoreUnusableError(
                        f"the store at {store.path} lacks migrations {store.pending_migrations} of this code; open it for "
                        f"writing once (agent-memory init --path {store.path}) to migrate it", path=str(store.path),
                        problem="outdated", pending=store.pending_migrations)
                embedder = embedder or shared_embedder(settings.embedder)
                service = cls(store, settings, clock, embedder, llm=llm, models=models, tracer_provider=tracer_provider, tools=tools)
                service._check_embedder(allow_embedder_mismatch)
                if not (read_only and store.backend == "postgresql"):  # there it only starts an index build
                    service.index.rebuild()
        except BaseException:
            # a file found damaged is left as it was: no checkpoint of its WAL on the way out
            store.close_quietly() if store.backend == "sqlite" else store.close()
            raise
        return service

    def _check_embedder(self, allow_mismatch: bool) -> None:
        current = (self.embedder.model_name, self.embedder.model_version)
        if self.store.read_only:  # compare only: a read-only open records nothing
            stored = (self.store.get_meta("embed_model"), self.store.get_meta("embed_version"))
        else:
            # one write transaction: processes opening a fresh store at once must not see the model
            # recorded without its version (or both record theirs)
            with self.store.transaction():
                stored = (self.store.get_meta("embed_model"), self.store.get_meta("embed_version"))
                if stored == (None, None):
                    self.store.set_meta("embed_model", current[0])
                    self.store.set_meta("embed_version", current[1])
                    self.store.set_meta("embed_dim", str(self.embedder.dim))
                    return
        if stored != current and stored != (None, None) and not allow_mismatch:
            raise EmbedderMismatchError(
                f"this store was embedded with {stored[0]} (version {stored[1]}) but the configured embedder is "
                f"{current[0]} (version {current[1]}); run `agent-memory reembed` to migrate it explicitly",
                stored_model=stored[0], stored_version=stored[1], configured_model=current[0], configured_version=current[1],
            )

    def close(self) -> None:
        """Close the store and stop the retriever's worker threads."""
        self.retriever.close()
        self.store.close()

    def __enter__(self) -> "MemoryService":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _now(self) -> str:
        return format_ts(self.clock.now())

    # -- grants -------------------------------------------------------------------------------

    def grant(self, agent_id: str, scope: str, read: bool = True, write: bool = False, *, actor: str, reason: str | None = None) -> dict:
        """Create or change a grant; refuses private agent-user scopes with the policy's reason."""
        validate_id(agent_id, "agent_id")
        check_text(actor, "actor")
        check_text(reason, "reason")
        parsed = parse_scope(scope)
        decision = check_grantable(parsed)
        if not decision:
            raise PolicyError(decision.reason, scope=parsed.key)
        if not read and not write:
            raise InvalidInputError("a grant needs read, write or both; use revoke to remove access")
        return save_grant(self.store, agent_id=agent_id, scope=parsed, read=read, write=write, now=self._now(), actor=actor, reason=reason)

    def revoke(self, agent_id: str, scope: str, *, actor: str, reason: str | None = None) -> None:
        """Remove an agent's grant on a scope."""
        validate_id(agent_id, "agent_id")
        check_text(actor, "actor")
        check_text(reason, "reason")
        delete_grant(self.store, agent_id=agent_id, scope=parse_scope(scope), now=self._now(), actor=actor, reason=reason)

    def grants(self, agent_id: str | None = None) -> list[dict]:
        """Every grant, or one agent's."""
        return list_grants(self.store, agent_id)

    def access(self, agent_id: str, user_id: str) -> ScopeAccess:
        """Readable and writable scopes of a principal, each with its reason."""
        validate_id(agent_id, "agent_id")
        validate_id(user_id, "user_id")
        return access_of(self.store, agent_id, user_id)

    # -- sessions -----------------------------------------------------------------------------

    def start_session(
        self, *, agent_id: str, user_id: str, session_id: str | None = None, project_id: str | None = None,
        write_targets: dict[str, str] | None = None, framework: str | None = None, trigger_mode: str | None = None,
    ) -> Session:
        """Begin (or resume) a conversation between an agent and a user.

        ``framework`` and ``trigger_mode`` record which adapter opened it (shown in the admin app).
        """
        validate_id(agent_id, "agent_id")
        validate_id(user_id, "user_id")
        if project_id is not None:
            validate_id(project_id, "project_id")
        if session_id is not None:
            validate_id(session_id, "session_id")
        if framework is not None:
            validate_id(framework, "framework")
        if trigger_mode not in (None, "tool_only", "auto", "hybrid"):
            raise InvalidInputError("trigger_mode must be tool_only, auto or hybrid", field="trigger_mode")
        targets = {"personal": f"user:{user_id}"}
        if project_id:
            targets["current_project"] = f"project:{project_id}"
        if self.settings.write.offer_private_target:
            targets["private"] = private_scope(agent_id, user_id).key
        for label, scope in (write_targets or {}).items():
            validate_id(label, "write target label")
            targets[label] = parse_scope(scope).key
        session_id = session_id or new_id("ses")
        sessions.open_session(self.store, session_id=session_id, agent_id=agent_id, user_id=user_id, project_id=project_id,
                              write_targets=targets, now=self._now(), framework=framework, trigger_mode=trigger_mode)
        return Session(self, session_id, agent_id, user_id, project_id, targets)

    def session(self, session_id: str) -> Session:
        """Reattach to an open session by id."""
        row = sessions.session_row(self.store, session_id)
        return Session(self, row["id"], row["agent_id"], row["user_id"], row["project_id"], row["write_targets"],
                       ended=row["ended_at"] is not None)

    def handle_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """Ingestion events for adapters: session_started, turn_completed, session_ended."""
        kind = event.get("type")
        if kind == "session_started":
            session = self.start_session(agent_id=event["agent_id"], user_id=event["user_id"], session_id=event.get("session_id"),
                                         project_id=event.get("project_id"), write_targets=event.get("write_targets"),
                                         framework=event.get("framework"), trigger_mode=event.get("trigger_mode"))
            return {"ok": True, "session_id": session.id}
        if kind == "turn_completed":
            turn = self.session(event["session_id"]).record_turn(event["role"], event["content"], at=event.get("at"))
            return {"ok": True, "turn": turn}
        if kind == "session_ended":
            run_id = self.session(event["session_id"]).end()
            return {"ok": True, "extraction_run_id": run_id}
        raise InvalidInputError(f"unknown event type {kind!r}; expected session_started, turn_completed or session_ended")

    def transcript(self, session_id: str) -> list[dict]:
        """Every turn of a session, in order."""
        return sessions.transcript(self.store, session_id)

    # -- tools --------------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict]:
        """JSON-schema definitions of the five tools (write targets unconstrained)."""
        return self.tools.schemas(self.settings, None)

    # -- search -------------------------------------------------------------------------------

    def search(self, request: SearchRequest | None = None, /, **params: Any) -> SearchResponse:
        """Run the retrieval pipeline for one :class:`~memory_core.retrieve.SearchRequest` (or its
        fields as keywords: ``agent_id``, ``user_id``, ``query`` and the options there); returns a
        ``SearchResponse`` with results, explanations, the empty reason and the stage trace. Every
        call is logged."""
        return self.retriever.search(request, **params)

    def search_batch(self, requests: list[SearchRequest]) -> list[SearchResponse]:
        """Many searches at once (``Retriever.search_batch``): all checked first, query vectors made
        in batches, each logged as its own search; the responses in order."""
        return self.retriever.search_batch(requests)

    def load_search(self, search_id: str):
        """A logged search rebuilt from the search log as a ``SearchResponse`` (``from_log`` set)."""
        return self.retriever.load(search_id)

    def replay_search(self, search_id: str, *, origin: str | None = "admin"):
        """Run a logged search again now, with its logged settings; the replay is logged too
        (with ``origin``, by default ``admin``)."""
        return self.retriever.replay(search_id, origin=origin)

    # -- inspection ---------------------------------------------------------------------------

    def record(self, record_id: str) -> Record:
        """Any record by id, whatever its status (admin view; no policy applied)."""
        record = self.lifecycle.get(record_id)
        if record is None:
            raise NotFoundError(f"no record {record_id}")
        return record

    def lineage(self, record_id: str) -> list[Record]:
        """Every version in the record's lineage, oldest first."""
        return inspection.lineage(self.store, self.record(record_id).lineage_id)

    def events_for(self, record_id: str) -> list[dict]:
        """The events of one record, in order."""
        return inspection.record_events(self.store, record_id)

    def entity(self, entity_id: str) -> dict | None:
        """An entity with its scope and aliases, or None."""
        return inspection.entity(self.store, entity_id)

    def stats(self) -> dict[str, Any]:
        """Counts for the overview: by type, status, scope kind and source kind, plus index state."""
        return {
            **overview.record_counts(self.store),
            "indexed_vectors": self.index.count(),
            "embedder": {"model": self.embedder.model_name, "version": self.embedder.model_version, "dim": self.embedder.dim},
        }

    # -- notebooks (renderers registered by memory_core.notebook) --------------------------------

    def show_record(self, record_id: str):
        """A ``RecordView``: the record with its lineage, links, evidence and events, for display."""
        return display.view("record", self, record_id)

    def _repr_html_(self) -> str:
        return display.html(self)

    def to_dataframe(self):
        """Record counts by type, status, scope kind and source kind as a pandas DataFrame."""
        return display.frame(self)
