"""What an agent sees, before any session: the scopes it can read for a user (with the grant behind
each) and the prefix an adapter would give its model (policy, ambient profile, tools).

The prefix comes from the adapters' own code (:func:`memory_core.adapters.preview.preview_context`,
the one exception to "admin_ui reaches memory through the service", declared in pyproject.toml):
the same runtime and profile assembly a session start runs, so the preview cannot drift from what
a session records. Nothing is written and no session is opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_core.adapters.preview import preview_context
from memory_core.service.admin_methods import RecordFilter

from .context_sizes import Part, prefix_parts, with_shares

LIVE = ["confirmed", "provisional"]
PRIVATE_REASON = "implicit private scope of this agent-user pair"


@dataclass
class AgentView:
    agent_id: str
    user_id: str
    scopes: list[dict[str, Any]]
    ignored: dict[str, str]
    prefix: dict[str, Any] | None
    problem: str | None = None  # why no prefix could be built (e.g. the adapter would refuse to start)
    parts: list[Part] = field(default_factory=list)

    @property
    def granted(self) -> list[dict[str, Any]]:
        """The readable scopes that come from a grant (not the implicit private scope)."""
        return [s for s in self.scopes if s["grant"] is not None]

    @property
    def live_records(self) -> int:
        return sum(s["live records"] for s in self.scopes)


def build_agent_view(service, agent_id: str, user_id: str, *, trigger_mode: str | None = None,
                     ambient: bool | None = None) -> AgentView:
    """The view for (agent, user); raises the service's InvalidInputError for a malformed id."""
    access = service.access(agent_id, user_id)
    grants = {g["scope"]: g for g in service.grants(agent_id)}
    counts = service.record_facet(RecordFilter(statuses=LIVE), "scope")
    scopes = []
    for scope, why in sorted(access.readable.items()):
        grant = grants.get(scope)
        scopes.append({"scope": scope, "why": why, "writable": scope in access.writable,
                       "grant": (f"read{' + write' if grant['can_write'] else ''}, by {grant['created_by']} at "
                                 f"{grant['created_at']}") if grant else None,
                       "live records": int(counts.get(scope, 0))})
    try:
        prefix = preview_context(service, agent_id, user_id, trigger_mode=trigger_mode, ambient=ambient)
        problem = None
    except Exception as exc:  # noqa: BLE001 - what an adapter's start would raise, shown to the person
        prefix, problem = None, getattr(exc, "message", None) or str(exc)
    parts = with_shares(prefix_parts(prefix)) if prefix else []
    return AgentView(agent_id, user_id, scopes, dict(access.ignored), prefix, problem, parts)


def default_modes(service) -> tuple[str, bool]:
    """The trigger mode and ambient switch an adapter uses when the host passes neither (the settings)."""
    return service.settings.adapters.trigger_mode, bool(service.settings.ambient.enabled)


def empty_reason(view: AgentView) -> str | None:
    """Why the agent would see nothing of the user's memory, or None when it sees something."""
    if view.granted:
        return None
    private = next((s for s in view.scopes if s["grant"] is None), None)
    held = private["live records"] if private else 0
    tail = (f" It can read only its own private scope {private['scope']}, which holds {held} live record(s)."
            if private else "")
    return (f"Agent {view.agent_id} has no read grant for user {view.user_id}, a project or the organisation: its "
            f"searches find nothing of {view.user_id}'s memory, and its ambient profile can only hold records of "
            f"its private scope.{tail} An operator can add a grant on the Grants page.")
