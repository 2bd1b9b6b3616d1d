"""Numbered, registered schema migrations.

Each migration is a function registered with :func:`migration`; the numbers applied are recorded
in ``schema_migrations`` so opening a store applies exactly the missing ones, in order, each in
its own transaction. Never edit a released migration: add a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..errors import MigrationError
from . import migrations_ambient, migrations_hardening, migrations_hostmem, migrations_mcp, migrations_mcp_owners, migrations_search

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: dict[int, tuple[str, Migration]] = {}


def migration(number: int, name: str) -> Callable[[Migration], Migration]:
    """Register ``fn`` as migration ``number``."""

    def register(fn: Migration) -> Migration:
        if number in MIGRATIONS:
            raise ValueError(f"migration {number} registered twice")
        MIGRATIONS[number] = (name, fn)
        return fn

    return register


def applied_migrations(conn: sqlite3.Connection) -> list[int]:
    """Numbers recorded in ``schema_migrations`` (empty for a blank file)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]


def migrate(conn: sqlite3.Connection, applied_at: str) -> list[int]:
    """Apply every registered migration not yet recorded; return the numbers applied.

    Each migration runs in its own ``BEGIN IMMEDIATE`` transaction, and which migrations are
    applied is read *inside* it: several processes opening a fresh store at once queue on the
    write lock, and each one that gets it sees what the previous ones already did.
    """
    newest_known = max(MIGRATIONS) if MIGRATIONS else 0
    # A store already at the newest migration needs no write lock (the common case: readers).
    done = set(applied_migrations(conn))
    _refuse_newer(done, newest_known)
    if set(MIGRATIONS) <= done:
        return []
    ran: list[int] = []
    for number in sorted(MIGRATIONS):
        name, fn = MIGRATIONS[number]
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = set(applied_migrations(conn))
            _refuse_newer(done, newest_known)
            if number in done:
                conn.execute("COMMIT")
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO schema_migrations (number, name, applied_at) VALUES (?, ?, ?)",
                (number, name, applied_at),
            )
            conn.execute("COMMIT")
        except MigrationError:
            conn.execute("ROLLBACK")
            raise
        except Exception as exc:
            conn.execute("ROLLBACK")
            raise MigrationError(f"migration {number} ({name}) failed: {exc}", number=number) from exc
        ran.append(number)
    return ran


def _refuse_newer(done: set[int], newest_known: int) -> None:
    if done and max(done) > newest_known:
        raise MigrationError(
            f"store schema is at migration {max(done)}, newer than this code ({newest_known})",
            store_version=max(done),
            code_version=newest_known,
        )


def _script(conn: sqlite3.Connection, sql: str) -> None:
    # executescript would COMMIT our transaction; run statement by statement instead.
    for statement in _split_sql(sql):
        conn.execute(statement)


def _split_sql(sql: str) -> list[str]:
    statements, buf, depth = [], [], 0
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER"):
            depth += 1
        if depth and upper.startswith("END;"):
            depth -= 1
        if stripped.endswith(";") and depth == 0:
            statements.append("\n".join(buf))
            buf = []
    if buf:
        statements.append("\n".join(buf))
    return statements


@migration(1, "core schema")
def _m0001_core(conn: sqlite3.Connection) -> None:
    _script(
        conn,
        """
        CREATE TABLE store_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );

        CREATE TABLE entities (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('person','project','org','repo','product','other')),
            canonical_name TEXT NOT NULL,
            scope_kind TEXT NOT NULL,
            scope_id TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'provisional' CHECK (status IN ('provisional','confirmed','merged')),
            merged_into TEXT REFERENCES entities(id),
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL
        );
        CREATE INDEX entities_scope ON entities(scope_kind, scope_id);

        CREATE TABLE entity_aliases (
            entity_id TEXT NOT NULL REFERENCES entities(id),
            alias TEXT NOT NULL,
            alias_norm TEXT NOT NULL,
            PRIMARY KEY (entity_id, alias_norm)
        );
        CREATE INDEX entity_aliases_norm ON entity_aliases(alias_norm);

        CREATE TABLE records (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL CHECK (type IN ('semantic','episodic','procedural')),
            version INTEGER NOT NULL DEFAULT 1,
            lineage_id TEXT NOT NULL,
            content TEXT NOT NULL,
            subject_entity_id TEXT REFERENCES entities(id),
            attribute TEXT,
            subject TEXT,
            scope_kind TEXT NOT NULL CHECK (scope_kind IN ('agent','user','project','org')),
            scope_id TEXT NOT NULL,
            source_kind TEXT NOT NULL CHECK (source_kind IN
                ('user_statement','system','tool_result','session_summary','agent_inference')),
            source_ref TEXT,
            creator_agent_id TEXT,
            evidence TEXT,
            evidence_session_id TEXT,
            evidence_turn INTEGER,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            event_at TEXT,
            expires_at TEXT,
            valid_from TEXT,
            valid_until TEXT,
            review_at TEXT,
            review_flagged_at TEXT,
            review_reason TEXT,
            confidence REAL NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('provisional','confirmed','superseded','expired','deleted')),
            observations INTEGER NOT NULL DEFAULT 1,
            last_observed_session TEXT,
            supersedes_id TEXT,
            superseded_by_id TEXT,
            conflicts_with TEXT NOT NULL DEFAULT '[]',
            tags TEXT NOT NULL DEFAULT '[]',
            embedding BLOB,
            embed_model TEXT,
            embed_version TEXT,
            embed_dim INTEGER,
            deleted_at TEXT
        );
        CREATE INDEX records_scope_status ON records(scope_kind, scope_id, status);
        CREATE INDEX records_subject ON records(subject, status);
        CREATE INDEX records_lineage ON records(lineage_id, version);
        CREATE INDEX records_review ON records(review_at) WHERE review_at IS NOT NULL AND review_flagged_at IS NULL;
        CREATE INDEX records_expiry ON records(expires_at) WHERE status = 'provisional';
        CREATE INDEX records_created ON records(created_at);

        CREATE TABLE record_entities (
            record_id TEXT NOT NULL REFERENCES records(id),
            entity_id TEXT NOT NULL REFERENCES entities(id),
            role TEXT NOT NULL CHECK (role IN ('subject','mention')),
            PRIMARY KEY (record_id, entity_id)
        );
        CREATE INDEX record_entities_entity ON record_entities(entity_id);

        -- Standalone FTS5 table whose rowid is records.seq; kept in step by the store in the
        -- same transaction as the record (not by triggers, so entity alias text can be joined in).
        CREATE VIRTUAL TABLE records_fts USING fts5(
            content, subject, aliases,
            tokenize = 'unicode61 remove_diacritics 2'
        );

        -- Durable change feed for the in-memory vector index of every process.
        CREATE TABLE index_changes (
            version INTEGER PRIMARY KEY AUTOINCREMENT,
            record_seq INTEGER NOT NULL,
            op TEXT NOT NULL CHECK (op IN ('upsert','delete','reset'))
        );

        CREATE TABLE grants (
            agent_id TEXT NOT NULL,
            scope_kind TEXT NOT NULL,
            scope_id TEXT NOT NULL,
            can_read INTEGER NOT NULL DEFAULT 1,
            can_write INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            PRIMARY KEY (agent_id, scope_kind, scope_id)
        );

        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            agent_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            project_id TEXT,
            write_targets TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            ended_at TEXT
        );
        CREATE INDEX sessions_user ON sessions(user_id, started_at);

        CREATE TABLE turns (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user','assistant','tool','system')),
            content TEXT NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (session_id, turn)
        );

        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            record_id TEXT,
            entity_id TEXT,
            reason TEXT,
            payload TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX events_record ON events(record_id);
        CREATE INDEX events_kind ON events(kind, at);
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only');
        END;
        CREATE TRIGGER events_no_delete BEFORE DELETE ON events
        BEGIN
            SELECT RAISE(ABORT, 'the event log is append-only');
        END;

        CREATE TABLE write_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            operation TEXT NOT NULL,
            agent_id TEXT,
            user_id TEXT,
            session_id TEXT,
            actor TEXT NOT NULL,
            outcome TEXT NOT NULL,
            record_id TEXT,
            status TEXT,
            source_kind TEXT,
            candidate TEXT NOT NULL DEFAULT '{}',
            validation TEXT NOT NULL DEFAULT '{}',
            stages TEXT NOT NULL DEFAULT '{}',
            total_ms REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX write_log_record ON write_log(record_id);
        CREATE INDEX write_log_at ON write_log(at);

        CREATE TABLE search_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            at TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT,
            raw_query TEXT NOT NULL,
            rewritten_query TEXT,
            rewrite_status TEXT,
            request TEXT NOT NULL DEFAULT '{}',
            scopes TEXT NOT NULL DEFAULT '[]',
            trace TEXT NOT NULL DEFAULT '{}',
            result_ids TEXT NOT NULL DEFAULT '[]',
            empty_reason TEXT,
            stages TEXT NOT NULL DEFAULT '{}',
            total_ms REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX search_log_at ON search_log(at);
        CREATE INDEX search_log_principal ON search_log(agent_id, user_id);

        CREATE TABLE extraction_runs (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            claimed_by TEXT,
            lease_until TEXT,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            error TEXT,
            extractor TEXT,
            reviewer TEXT,
            stages TEXT NOT NULL DEFAULT '{}',
            summary_record_id TEXT
        );
        CREATE INDEX extraction_runs_status ON extraction_runs(status, lease_until);

        CREATE TABLE extraction_candidates (
            run_id TEXT NOT NULL REFERENCES extraction_runs(id),
            idx INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            candidate TEXT NOT NULL,
            verdict TEXT,
            review TEXT NOT NULL DEFAULT '{}',
            outcome TEXT,
            record_id TEXT,
            detail TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, attempt, idx)
        );
        """,
    )


@migration(20, "extraction job leases and attempt log")
def _m0020_extraction_jobs(conn: sqlite3.Connection) -> None:
    # not_before: a failed attempt's retry backoff; attempt_limit: a per-run override of
    # extraction.max_attempts (a manual retry grants one more); trigger: why the run exists.
    # extraction_attempts keeps every attempt of a run, failed and abandoned ones included.
    _script(
        conn,
        """
        ALTER TABLE extraction_runs ADD COLUMN not_before TEXT;
        ALTER TABLE extraction_runs ADD COLUMN attempt_limit INTEGER;
        ALTER TABLE extraction_runs ADD COLUMN trigger TEXT NOT NULL DEFAULT 'session_end';
        CREATE INDEX extraction_runs_session ON extraction_runs(session_id);
        CREATE INDEX extraction_candidates_record ON extraction_candidates(record_id);

        CREATE TABLE extraction_attempts (
            run_id TEXT NOT NULL REFERENCES extraction_runs(id),
            attempt INTEGER NOT NULL,
            worker_id TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            outcome TEXT NOT NULL CHECK (outcome IN ('running','succeeded','failed','lease_lost','abandoned')),
            error TEXT,
            extractor TEXT,
            reviewer TEXT,
            stages TEXT NOT NULL DEFAULT '{}',
            detail TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (run_id, attempt)
        );
        """,
    )


@migration(50, "procedural records: name, trigger, steps, pitfalls")
def _m0050_procedures(conn: sqlite3.Connection) -> None:
    # One row per procedural record version (the record row holds the description as its
    # content and embedding; lexical search reads name and trigger from here).
    _script(
        conn,
        """
        CREATE TABLE procedures (
            record_id TEXT PRIMARY KEY REFERENCES records(id),
            name TEXT NOT NULL,
            trigger TEXT NOT NULL,
            steps TEXT NOT NULL DEFAULT '[]',
            pitfalls TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX procedures_name ON procedures(name);

        -- Forgetting a procedural record erases its name, trigger, steps and pitfalls too,
        -- whichever code path tombstones it.
        CREATE TRIGGER procedures_erased_with_record AFTER UPDATE OF status ON records
        WHEN NEW.status = 'deleted'
        BEGIN
            DELETE FROM procedures WHERE record_id = NEW.id;
        END;
        """,
    )


@migration(70, "search settings kept once per distinct configuration")
def _m0070_search_settings(conn: sqlite3.Connection) -> None:
    # A search_log row names its retrieval settings by content hash instead of carrying the whole
    # settings object (about 1.5 KB) on every row; replay and load_search read them back here.
    _script(
        conn,
        """
        CREATE TABLE search_settings (
            id TEXT PRIMARY KEY,
            settings TEXT NOT NULL,
            first_used_at TEXT NOT NULL
        );
        """,
    )


@migration(80, "session origin: framework and trigger mode")
def _m0080_session_origin(conn: sqlite3.Connection) -> None:
    # Which adapter opened a session (deepagents, crewai; NULL for direct API use) and its
    # trigger mode (tool_only, auto, hybrid), so the admin app can show where a transcript came from.
    _script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN framework TEXT;
        ALTER TABLE sessions ADD COLUMN trigger_mode TEXT CHECK (trigger_mode IS NULL OR trigger_mode IN ('tool_only','auto','hybrid'));
        """,
    )


# Store hardening (issue 12), kept in their own module to keep this one short.
migration(60, "event reasons can be redacted when a record is forgotten")(migrations_hardening.allow_event_redaction)
migration(61, "tombstones hold no attribute or subject; FTS rows name only same-scope entities")(
    migrations_hardening.empty_tombstones_and_scope_fts)
migration(62, "records indexed by source, for a write's same-fact check")(migrations_hardening.records_by_source)

# The ambient profile and what a model saw (issue 15), in their own module.
migration(90, "search origin: model, host, admin or eval")(migrations_ambient.search_origin)
migration(91, "ambient profile decisions per record lineage")(migrations_ambient.ambient_decisions)
migration(92, "session context: the prompt prefix as the model received it")(migrations_ambient.session_context)
# Host-issued conditional memory (issue 15): decisions per user turn and recorded fitness results.
migration(95, "host-issued memory decisions and fitness results")(migrations_hostmem.host_memory_tables)
# Issue 25: the MCP server's API keys, host sessions, session owners; issue 27: the extractor's search origin.
migration(100, "API keys and host sessions reported by hooks")(migrations_mcp.mcp_tables)
migration(105, "search origin: extraction too")(migrations_search.extraction_origin)
migration(106, "MCP session owners and session end reasons")(migrations_mcp_owners.session_owners)
