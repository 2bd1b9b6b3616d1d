"""The host API: :class:`MemoryService` and :class:`Session`.

Hosts, adapters, the admin app, notebooks and tests all go through this facade::

    service = MemoryService.open("var/memory.sqlite")
    service.grant("assistant", "user:alice", read=True, write=True, actor="host")
    session = service.start_session(agent_id="assistant", user_id="alice")
    session.record_turn("user", "Please keep answers concise.")
    session.call_tool("memory_write", {...})
    session.end()
"""

from __future__ import annotations

import functools
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from .clock import Clock, SystemClock, format_ts, parse_ts
from .errors import EmbedderMismatchError, InvalidInputError, NotFoundError, PolicyError, SessionClosedError
from .ids import new_id
from .index.vector_index import VectorIndex
from .ingest.evidence import AnthropicEntailmentJudge, OfflineEntailmentJudge
from .ingest.lifecycle import Lifecycle
from .ingest.writer import Ingestor, WriteOutcome, WriteRequest
from .llm.anthropic_client import build_llm
from .policy.grants import ScopeAccess, check_grantable, resolve_access
from .policy.scopes import Scope, parse_scope, private_scope, validate_id
from .settings import EmbedderSettings, Settings, load_settings
from .store.db import Store, dumps, loads
from .store.records import Record, fetch_record, fetch_records

TURN_ROLES = ("user", "assistant", "tool", "system")
MAX_TURN_CHARS = 200_000

_embedder_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _cached_embedder(key: str):
    from .embed import build_embedder

    return build_embedder(EmbedderSettings.model_validate_json(key))


def shared_embedder(settings: EmbedderSettings):
    """One loaded embedder per configuration per process, so the model stays warm."""
    with _embedder_lock:
        return _cached_embedder(settings.model_dump_json())


class MemoryService:
    """A memory store opened for use: SQLite, vector index, embedder, write path and tools."""

    def __init__(self, store: Store, settings: Settings, clock: Clock, embedder, *, llm=None) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.embedder = embedder
        self.llm = llm
        self.index = VectorIndex(store, embedder.dim)
        offline_judge = OfflineEntailmentJudge(embedder.embed, settings.write.entailment_min_coverage, settings.write.entailment_min_cosine)
        self.judge = (
            AnthropicEntailmentJudge(llm, offline_judge)
            if settings.write.entailment_judge == "anthropic" and llm is not None
            else offline_judge
        )
        self.ingestor = Ingestor(store, self.index, embedder, self.judge, settings.write, clock)
        self.lifecycle = Lifecycle(store, self.index, settings.write, clock)
        self._extensions: dict[str, Any] = {}

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
        allow_embedder_mismatch: bool = False,
    ) -> "MemoryService":
        """Create or migrate the store at ``path`` and load the configured embedder.

        Refuses (EmbedderMismatchError) a store whose rows were embedded by another model unless
        ``allow_embedder_mismatch`` is set, which only :meth:`reembed` should need.
        """
        settings = settings or load_settings()
        clock = clock or SystemClock()
        embedder = embedder or shared_embedder(settings.embedder)
        store = Store.open(path, format_ts(clock.now()))
        if llm is None:
            llm = build_llm(settings.anthropic)
        service = cls(store, settings, clock, embedder, llm=llm)
        try:
            service._check_embedder(allow_embedder_mismatch)
            service.index.rebuild()
        except Exception:
            store.close()
            raise
        return service

    def _check_embedder(self, allow_mismatch: bool) -> None:
        stored = (self.store.get_meta("embed_model"), self.store.get_meta("embed_version"))
        current = (self.embedder.model_name, self.embedder.model_version)
        if stored == (None, None):
            self.store.set_meta("embed_model", current[0])
            self.store.set_meta("embed_version", current[1])
            self.store.set_meta("embed_dim", str(self.embedder.dim))
            return
        if stored != current and not allow_mismatch:
            raise EmbedderMismatchError(
                f"this store was embedded with {stored[0]} (version {stored[1]}) but the configured embedder is "
                f"{current[0]} (version {current[1]}); run `agent-memory reembed` to migrate it explicitly",
                stored_model=stored[0], stored_version=stored[1], configured_model=current[0], configured_version=current[1],
            )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "MemoryService":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- grants -------------------------------------------------------------------------------

    def grant(self, agent_id: str, scope: str, read: bool = True, write: bool = False, *, actor: str, reason: str | None = None) -> dict:
        """Create or change a grant; refuses private agent-user scopes with the policy's reason."""
        validate_id(agent_id, "agent_id")
        parsed = parse_scope(scope)
        decision = check_grantable(parsed)
        if not decision:
            raise PolicyError(decision.reason, scope=parsed.key)
        if not read and not write:
            raise InvalidInputError("a grant needs read, write or both; use revoke to remove access")
        now = format_ts(self.clock.now())
        with self.store.transaction() as conn:
            previous = conn.execute(
                "SELECT can_read, can_write FROM grants WHERE agent_id = ? AND scope_kind = ? AND scope_id = ?",
                (agent_id, parsed.kind, parsed.id),
            ).fetchone()
            conn.execute(
                "INSERT INTO grants (agent_id, scope_kind, scope_id, can_read, can_write, created_at, created_by) VALUES (?,?,?,?,?,?,?) "
                "ON CONFLICT(agent_id, scope_kind, scope_id) DO UPDATE SET can_read = excluded.can_read, can_write = excluded.can_write",
                (agent_id, parsed.kind, parsed.id, int(read), int(write), now, actor),
            )
            self.store.append_event(
                conn, at=now, kind="grant.changed" if previous else "grant.added", actor=actor, reason=reason,
                payload={"agent_id": agent_id, "scope": parsed.key, "read": read, "write": write,
                         "previous": dict(previous) if previous else None},
            )
        return {"agent_id": agent_id, "scope": parsed.key, "read": read, "write": write}

    def revoke(self, agent_id: str, scope: str, *, actor: str, reason: str | None = None) -> None:
        """Remove an agent's grant on a scope."""
        validate_id(agent_id, "agent_id")
        parsed = parse_scope(scope)
        now = format_ts(self.clock.now())
        with self.store.transaction() as conn:
            cur = conn.execute("DELETE FROM grants WHERE agent_id = ? AND scope_kind = ? AND scope_id = ?", (agent_id, parsed.kind, parsed.id))
            if cur.rowcount == 0:
                raise NotFoundError(f"agent {agent_id} has no grant on {parsed.key}")
            self.store.append_event(conn, at=now, kind="grant.revoked", actor=actor, reason=reason, payload={"agent_id": agent_id, "scope": parsed.key})

    def grants(self, agent_id: str | None = None) -> list[dict]:
        sql = "SELECT agent_id, scope_kind || ':' || scope_id AS scope, can_read, can_write, created_at, created_by FROM grants"
        rows = self.store.query(sql + (" WHERE agent_id = ?" if agent_id else "") + " ORDER BY agent_id, scope", (agent_id,) if agent_id else ())
        return [{**dict(r), "can_read": bool(r["can_read"]), "can_write": bool(r["can_write"])} for r in rows]

    def access(self, agent_id: str, user_id: str) -> ScopeAccess:
        """Readable and writable scopes of a principal, each with its reason."""
        validate_id(agent_id, "agent_id")
        validate_id(user_id, "user_id")
        with self.store.lock:
            return resolve_access(self.store.conn, agent_id, user_id)

    # -- sessions -----------------------------------------------------------------------------

    def start_session(
        self, *, agent_id: str, user_id: str, session_id: str | None = None, project_id: str | None = None,
        write_targets: dict[str, str] | None = None, framework: str | None = None, trigger_mode: str | None = None,
    ) -> "Session":
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
        now = format_ts(self.clock.now())
        with self.store.transaction() as conn:
            existing = conn.execute("SELECT agent_id, user_id, ended_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if existing:
                if (existing["agent_id"], existing["user_id"]) != (agent_id, user_id):
                    raise PolicyError(f"session {session_id} belongs to another principal")
                if existing["ended_at"]:
                    raise SessionClosedError(f"session {session_id} has ended")
            else:
                conn.execute(
                    "INSERT INTO sessions (id, agent_id, user_id, project_id, write_targets, started_at, framework, trigger_mode) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    (session_id, agent_id, user_id, project_id, dumps(targets), now, framework, trigger_mode),
                )
                self.store.append_event(conn, at=now, kind="session.started", actor=f"agent:{agent_id}",
                                        payload={"session_id": session_id, "user_id": user_id, "project_id": project_id,
                                                 "framework": framework, "trigger_mode": trigger_mode})
        return Session(self, session_id, agent_id, user_id, project_id, targets)

    def session(self, session_id: str) -> "Session":
        """Reattach to an open session by id."""
        row = self.store.query_one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            raise NotFoundError(f"no session {session_id}")
        return Session(self, row["id"], row["agent_id"], row["user_id"], row["project_id"], loads(row["write_targets"], {}),
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
        return [dict(r) for r in self.store.query("SELECT turn, role, content, at FROM turns WHERE session_id = ? ORDER BY turn", (session_id,))]

    # -- tools --------------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict]:
        """JSON-schema definitions of the five tools (write targets unconstrained)."""
        from .tools import TOOLS

        return [tool.schema() for tool in TOOLS.values()]

    def revise(self, session: "Session | None", record: Record, *, content: str, reason: str, actor: str,
               source_kind: str | None = None, evidence: str | None = None, valid_from: datetime | None = None,
               valid_until: datetime | None = None, review_at: datetime | None = None,
               attribute: str | None = None) -> WriteOutcome:
        """Write a new version of ``record``; without a session (a person editing in the admin app)
        the original source kind and evidence are kept, since a reviewer may only narrow a record."""
        if session is not None:
            access = session.access()
            agent_id, user_id, session_id = session.agent_id, session.user_id, session.id
        else:
            access = ScopeAccess("admin", "admin", writable={record.scope: f"reviewer {actor} editing"}, readable={record.scope: "reviewer"})
            agent_id, user_id, session_id = record.creator_agent_id or "admin", record.scope_id, None
        keep_source = session is None
        request = WriteRequest(
            type=record.type, content=content, scope=Scope(record.scope_kind, record.scope_id),
            source_kind=record.source_kind if keep_source else (source_kind or "agent_inference"),
            agent_id=agent_id, user_id=user_id, actor=actor, attribute=attribute if attribute is not None else record.attribute,
            evidence=record.evidence if keep_source else evidence, session_id=session_id,
            tags=list(record.tags), event_at=parse_ts(record.event_at),
            valid_from=valid_from or parse_ts(record.valid_from), valid_until=valid_until or parse_ts(record.valid_until),
            review_at=review_at or (parse_ts(record.review_at) if not record.review_flagged_at else None),
            source_ref=record.source_ref, operation=f"memory_revise: {reason}", evidence_verified=keep_source,
            revises=record,
        )
        return self.ingestor.write(request, access)

    # -- search -------------------------------------------------------------------------------

    def search(
        self, *, agent_id: str, user_id: str, query: str, types: list[str] | None = None,
        time_from: datetime | str | None = None, time_to: datetime | str | None = None,
        entity_hints: list[str] | None = None, limit: int | None = None, historical: bool = False,
        context: str | None = None, rewrite: bool | None = None, rerank: bool | None = None,
        session_id: str | None = None,
    ):
        """Run the retrieval pipeline as (agent, user); returns a ``memory_core.retrieve.SearchResponse``
        with results, explanations, the empty reason and the stage trace. Every call is logged."""
        from .retrieve import retriever_for

        return retriever_for(self).search(
            agent_id=agent_id, user_id=user_id, query=query, types=types, time_from=time_from, time_to=time_to,
            entity_hints=entity_hints, limit=limit, historical=historical, context=context, rewrite=rewrite,
            rerank=rerank, session_id=session_id,
        )

    def load_search(self, search_id: str):
        """A logged search rebuilt from the search log as a ``SearchResponse`` (``from_log`` set)."""
        from .retrieve import load_search

        return load_search(self, search_id)

    def replay_search(self, search_id: str):
        """Run a logged search again now, with its logged settings; the replay is logged too."""
        from .retrieve import replay_search

        return replay_search(self, search_id)

    # -- inspection ---------------------------------------------------------------------------

    def record(self, record_id: str) -> Record:
        """Any record by id, whatever its status (admin view; no policy applied)."""
        record = self.lifecycle.get(record_id)
        if record is None:
            raise NotFoundError(f"no record {record_id}")
        return record

    def lineage(self, record_id: str) -> list[Record]:
        """Every version in the record's lineage, oldest first."""
        record = self.record(record_id)
        with self.store.lock:
            return fetch_records(self.store.conn, "r.lineage_id = ? ORDER BY r.version, r.seq", (record.lineage_id,))

    def events_for(self, record_id: str) -> list[dict]:
        rows = self.store.query("SELECT * FROM events WHERE record_id = ? ORDER BY seq", (record_id,))
        return [{**dict(r), "payload": loads(r["payload"], {})} for r in rows]

    def entity(self, entity_id: str) -> dict | None:
        row = self.store.query_one("SELECT * FROM entities WHERE id = ?", (entity_id,))
        if row is None:
            return None
        aliases = [r["alias"] for r in self.store.query("SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY alias", (entity_id,))]
        return {**dict(row), "scope": f"{row['scope_kind']}:{row['scope_id']}", "aliases": aliases}

    def stats(self) -> dict[str, Any]:
        """Counts for the overview: by type, status, scope kind and source kind, plus index state."""
        def group(column: str) -> dict[str, int]:
            return {r[0]: r[1] for r in self.store.query(f"SELECT {column}, COUNT(*) FROM records GROUP BY {column} ORDER BY {column}")}

        return {
            "path": str(self.store.path),
            "records": self.store.scalar("SELECT COUNT(*) FROM records") or 0,
            "by_type": group("type"),
            "by_status": group("status"),
            "by_scope_kind": group("scope_kind"),
            "by_source_kind": group("source_kind"),
            "entities": self.store.scalar("SELECT COUNT(*) FROM entities WHERE status != 'merged'") or 0,
            "grants": self.store.scalar("SELECT COUNT(*) FROM grants") or 0,
            "sessions": self.store.scalar("SELECT COUNT(*) FROM sessions") or 0,
            "review_due": self.store.scalar("SELECT COUNT(*) FROM records WHERE review_flagged_at IS NOT NULL AND status != 'deleted'") or 0,
            "provisional": self.store.scalar("SELECT COUNT(*) FROM records WHERE status = 'provisional'") or 0,
            "records_version": self.store.records_version(),
            "indexed_vectors": self.index.count(),
            "embedder": {"model": self.embedder.model_name, "version": self.embedder.model_version, "dim": self.embedder.dim},
        }

    # -- notebooks (memory_core.notebook) -------------------------------------------------------

    def show_record(self, record_id: str):
        """A ``RecordView``: the record with its lineage, links, evidence and events, for display."""
        from .notebook.records import RecordView

        return RecordView(self, record_id)

    def _repr_html_(self) -> str:
        from .notebook.overview import service_html

        return service_html(self)

    def to_dataframe(self):
        """Record counts by type, status, scope kind and source kind as a pandas DataFrame."""
        from .notebook.overview import service_frame

        return service_frame(self)

    # -- maintenance --------------------------------------------------------------------------

    def reembed(self, *, actor: str, batch_size: int = 256, progress=None) -> int:
        """Re-embed every non-deleted record with the configured embedder (the explicit migration)."""
        rows = self.store.query("SELECT seq, content FROM records WHERE status != 'deleted' ORDER BY seq")
        done = 0
        from .store.records import vector_to_blob

        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            vectors = self.embedder.embed([r["content"] for r in chunk])
            with self.store.transaction() as conn:
                for row, vector in zip(chunk, vectors):
                    conn.execute(
                        "UPDATE records SET embedding = ?, embed_model = ?, embed_version = ?, embed_dim = ? WHERE seq = ?",
                        (vector_to_blob(vector), self.embedder.model_name, self.embedder.model_version, int(vector.shape[0]), row["seq"]),
                    )
            done += len(chunk)
            if progress:
                progress(done, len(rows))
        now = format_ts(self.clock.now())
        with self.store.transaction() as conn:
            for key, value in (("embed_model", self.embedder.model_name), ("embed_version", self.embedder.model_version), ("embed_dim", str(self.embedder.dim))):
                conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
            self.store.bump(conn, 0, "reset")
            self.store.append_event(conn, at=now, kind="store.reembedded", actor=actor,
                                    payload={"records": done, "model": self.embedder.model_name, "version": self.embedder.model_version})
        self.index.rebuild()
        return done

    # -- extraction and maintenance (memory_core.extract, memory_core.maintenance) ---------------

    def run_extraction(self, run_id: str | None = None, *, worker_id: str | None = None):
        """Process extraction run ``run_id`` now, or the oldest due run; a ``RunDetail`` or None."""
        from .extract.api import run_extraction

        return run_extraction(self, run_id, worker_id=worker_id)

    def enqueue_extraction(self, session_id: str, *, actor: str, trigger: str = "manual") -> str:
        """Queue a new extraction run for an ended session; returns the run id."""
        from .extract.runs import enqueue

        return enqueue(self.store, self.clock, session_id, trigger=trigger, actor=actor)

    def retry_extraction(self, run_id: str, *, actor: str, run_now: bool = False):
        """Requeue a failed or backing-off run (one extra attempt if its attempts are spent)."""
        from .extract.api import retry_extraction

        return retry_extraction(self, run_id, actor=actor, run_now=run_now)

    def extraction_runs(self, *, status: str | None = None, session_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
        """Extraction runs, newest first, with candidate and write counts of their latest attempt."""
        from .extract.runs import list_runs

        return list_runs(self.store, status=status, session_id=session_id, limit=limit, offset=offset)

    def extraction_run(self, run_id: str, attempt: int | None = None):
        """One run end to end (``RunDetail``): attempts, stage timings, candidates with verdicts and outcomes."""
        from .extract.runs import get_run

        return get_run(self.store, run_id, attempt)

    def extract_transcript(self, *, agent_id: str, user_id: str, turns: list[dict], project_id: str | None = None,
                           actor: str = "admin", run_now: bool = True):
        """Create a session from uploaded turns ({role, content, at?}), end it and run extraction."""
        from .extract.api import extract_transcript

        return extract_transcript(self, agent_id=agent_id, user_id=user_id, turns=turns, project_id=project_id,
                                  actor=actor, run_now=run_now)

    def run_maintenance(self, *, actor: str = "maintenance") -> dict:
        """Expire unreinforced provisional records and flag due reviews; returns the ids changed."""
        from .maintenance import run_maintenance

        return run_maintenance(self, actor=actor).to_dict()

    def extension(self, name: str, factory) -> Any:
        """A lazily built per-service component (retriever, extraction runner...)."""
        if name not in self._extensions:
            self._extensions[name] = factory(self)
        return self._extensions[name]


class Session:
    """One conversation between an agent and a user: transcript turns and tool calls."""

    def __init__(self, service: MemoryService, session_id: str, agent_id: str, user_id: str, project_id: str | None,
                 write_targets: dict[str, str], ended: bool = False) -> None:
        self.service = service
        self.id = session_id
        self.agent_id = agent_id
        self.user_id = user_id
        self.project_id = project_id
        self.write_targets = dict(write_targets)
        self.ended = ended

    def access(self) -> ScopeAccess:
        return self.service.access(self.agent_id, self.user_id)

    def resolve_target(self, label: str) -> Scope:
        """Symbolic write target → scope; the model never names scopes itself."""
        if label not in self.write_targets:
            raise InvalidInputError(
                f"unknown write target {label!r}; this session offers: {', '.join(sorted(self.write_targets))}",
                field="target", available=sorted(self.write_targets),
            )
        return parse_scope(self.write_targets[label])

    def record_turn(self, role: str, content: str, at: datetime | str | None = None) -> int:
        """Append a transcript turn; returns its number (0-based)."""
        if self.ended:
            raise SessionClosedError(f"session {self.id} has ended")
        if role not in TURN_ROLES:
            raise InvalidInputError(f"role must be one of {', '.join(TURN_ROLES)}", field="role")
        if not isinstance(content, str):
            raise InvalidInputError("turn content must be a string", field="content")
        if len(content) > MAX_TURN_CHARS:
            raise InvalidInputError(f"turn content is longer than {MAX_TURN_CHARS} characters", field="content")
        when = format_ts(parse_ts(at) if at is not None else self.service.clock.now())
        with self.service.store.transaction() as conn:
            turn = conn.execute("SELECT COALESCE(MAX(turn) + 1, 0) FROM turns WHERE session_id = ?", (self.id,)).fetchone()[0]
            conn.execute("INSERT INTO turns (session_id, turn, role, content, at) VALUES (?,?,?,?,?)", (self.id, turn, role, content, when))
        return int(turn)

    def call_tool(self, name: str, arguments: dict | str | None) -> dict:
        """Run a tool as this session's principal; always returns a JSON-able dict."""
        from .tools import call_tool

        if self.ended:
            return {"ok": False, "error": SessionClosedError(f"session {self.id} has ended").to_dict()}
        return call_tool(self, name, arguments)

    def tool_schemas(self) -> list[dict]:
        """Tool definitions with this session's write targets as the allowed values."""
        from .tools import TOOLS

        return [tool.schema(sorted(self.write_targets)) for tool in TOOLS.values()]

    def end(self) -> str | None:
        """End the session; enqueues an extraction run (returned) when extraction is on."""
        if self.ended:
            raise SessionClosedError(f"session {self.id} has already ended")
        now = format_ts(self.service.clock.now())
        run_id = None
        with self.service.store.transaction() as conn:
            conn.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (now, self.id))
            self.service.store.append_event(conn, at=now, kind="session.ended", actor=f"agent:{self.agent_id}", payload={"session_id": self.id})
            if self.service.settings.extraction.extract_on_session_end:
                run_id = new_id("run")
                conn.execute(
                    "INSERT INTO extraction_runs (id, session_id, status, created_at) VALUES (?,?, 'queued', ?)",
                    (run_id, self.id, now),
                )
        self.ended = True
        return run_id
