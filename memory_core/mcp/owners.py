"""Who serves an MCP session, whether that process still lives, and ending a session exactly once.

Every MCP memory session records its owner (``mcp_session_owners``): the host name, the pid
namespace, the pid, and the process's start (the boot id and ``/proc/<pid>/stat`` field 22, its
start time in clock ticks since boot). A server killed with SIGKILL cannot end its sessions, so
other servers do it for it:

- **the pid rule** (every start of ``agent-memory mcp``, and the HTTP server's periodic sweep): an
  open session whose owner is on this host (same host name and pid namespace) and is dead is
  ended. Dead means: the pid is not running, or it runs with another start time (the pid was
  reused), or the owner started in an earlier boot. A session owned on another host is never
  ended by this rule (its pid means nothing here);
- **the idle rule** (the same sweeps): an open HTTP session with no sign of life for
  ``mcp.session_idle_s`` plus one touch interval is ended, whichever host owns it. A live server
  ends its own idle sessions itself after ``mcp.session_idle_s``, and keeps sessions with a request
  in flight alive in the store, so the rule only reaches sessions whose server went silent.

Ending is :func:`end_once`: a conditional UPDATE (``sessions.ended_at IS NULL``) in the same
whole-store transaction as the ordinary end (``Session.end``: ``ended_at``, the ``session.ended``
event, the extraction run), so two processes that try at once end a session once and queue one run.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from datetime import timedelta

from ..clock import format_ts, parse_ts
from ..store import mcp_owners

log = logging.getLogger(__name__)

BOOT_ID = "/proc/sys/kernel/random/boot_id"
GONE = "owner process gone"
REUSED = "owner process gone (its pid now runs another process)"
REBOOTED = "owner process gone (its host restarted)"
TOUCH_FRACTION = 4  # last activity is written at most once per idle_s / 4 per session


@dataclass(frozen=True)
class ProcessIdentity:
    """Where a process runs and which process it is, in a form that survives pid reuse."""

    host_name: str
    pid_namespace: str | None
    pid: int
    process_start: str | None  # "<boot id>:<start ticks>"; None where /proc cannot say

    def same_host(self, row: dict) -> bool:
        """Whether the owner in ``row`` has a pid this process can check (same host and pid namespace)."""
        return row["host_name"] == self.host_name and row["pid_namespace"] == self.pid_namespace

    def is_owner(self, row: dict) -> bool:
        """Whether ``row`` names this very process."""
        return self.same_host(row) and row["pid"] == self.pid and row["process_start"] == self.process_start


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def process_start(pid: int) -> str | None:
    """``"<boot id>:<start ticks>"`` of a running process, or None when it is not running (or /proc is absent).

    The start time is field 22 of ``/proc/<pid>/stat``; the process name (field 2) may hold spaces
    and parentheses, so the fields are counted after its last ``)``. A zombie (state ``Z``: dead,
    not yet reaped by its parent) or a dead task (``X``) is not running.
    """
    stat = _read(f"/proc/{int(pid)}/stat")
    boot = _read(BOOT_ID)
    if stat is None or boot is None or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None
    return f"{boot}:{fields[19]}"


def this_process() -> ProcessIdentity:
    """This process's identity, for the owner rows of the sessions it opens."""
    pid = os.getpid()
    return ProcessIdentity(socket.gethostname(), _pid_namespace(), pid, process_start(pid))


def owner_gone(row: dict, me: ProcessIdentity) -> str | None:
    """Why the owner in ``row`` is dead (an end reason), or None when it lives or cannot be checked here."""
    if not me.same_host(row) or me.is_owner(row):
        return None
    recorded = row["process_start"]
    if recorded is not None and me.process_start is not None and recorded.split(":")[0] != me.process_start.split(":")[0]:
        return REBOOTED
    if recorded is not None and me.process_start is not None:
        now = process_start(row["pid"])
        if now is None:
            return GONE
        return None if now == recorded else REUSED
    try:  # no /proc (or no start recorded): whether the pid runs at all is all that can be known
        os.kill(int(row["pid"]), 0)
    except ProcessLookupError:
        return GONE
    except PermissionError:
        return None
    return None


def record_owner(service, session_id: str, transport: str, me: ProcessIdentity | None = None) -> None:
    """Record this process as the server of MCP session ``session_id``."""
    me = me or this_process()
    mcp_owners.insert_owner(service.store, {
        "session_id": session_id, "transport": transport, "host_name": me.host_name, "pid_namespace": me.pid_namespace,
        "pid": me.pid, "process_start": me.process_start, "at": format_ts(service.clock.now())})


def end_once(service, session_id: str, reason: str, *, idle_before: str | None = None) -> tuple[bool, str | None]:
    """End an open session as ``Session.end`` does, unless someone already has: (ended here, run id)."""
    with service.store.transaction() as conn:
        if not mcp_owners.claim_end(conn, session_id, reason, idle_before=idle_before):
            return False, None
        session = service.session(session_id)
        run_id = session.end(enqueue_actor=f"mcp:{session.agent_id}")
    return True, run_id


def idle_limit_s(idle_s: float) -> float:
    """How long an HTTP session's recorded activity may lag before another server ends it: the idle
    period plus the touch interval (the recorded time may be that much behind the last request)."""
    return idle_s + idle_s / TOUCH_FRACTION


@dataclass(frozen=True)
class Ended:
    """A session a sweep ended: which, why, and its extraction run."""

    session_id: str
    reason: str
    run_id: str | None


def sweep(service, me: ProcessIdentity, *, idle_s: float) -> list[Ended]:
    """End the open MCP sessions whose owner is dead on this host, and HTTP sessions idle past the limit."""
    now = service.clock.now()
    idle_before = format_ts(now - timedelta(seconds=idle_limit_s(idle_s)))
    ended = []
    for row in mcp_owners.open_owned_sessions(service.store):
        if me.is_owner(row):
            continue
        reason, before = owner_gone(row, me), None
        if reason is None and row["transport"] == "http" and parse_ts(row["last_activity_at"]) < parse_ts(idle_before):
            reason, before = f"idle (no sign of its server for over {idle_limit_s(idle_s):g} s)", idle_before
        if reason is None:
            continue
        done, run_id = end_once(service, row["session_id"], reason, idle_before=before)
        if done:
            log.info("ended MCP session %s of pid %s on %s (%s); extraction run %s", row["session_id"], row["pid"],
                     row["host_name"], reason, run_id or "not queued")
            ended.append(Ended(row["session_id"], reason, run_id))
    return ended


def sweep_at_start(service, me: ProcessIdentity) -> list[Ended]:
    """The sweep a starting server runs; a failure is logged and the server starts anyway (the next
    start, or the HTTP server's next sweep, tries again)."""
    try:
        ended = sweep(service, me, idle_s=service.settings.mcp.session_idle_s)
    except Exception:  # noqa: BLE001 - cleaning up after others must never stop this server
        log.exception("could not end the sessions of dead MCP servers")
        return []
    if ended:
        log.info("ended %d MCP session(s) left open by servers that stopped without ending them", len(ended))
    return ended


def touch(service, session_ids: list[str]) -> int:
    """Record a sign of life now for those open sessions; returns how many were still open and older."""
    return mcp_owners.touch_owner(service.store, list(session_ids), format_ts(service.clock.now()))


def ended_elsewhere(service, session_id: str) -> bool:
    """Whether the session has ended in the store (another process may have ended it)."""
    row = mcp_owners.owner_row(service.store, session_id)
    return row is None or row["ended_at"] is not None
