"""What an adapter would give a model for an (agent, user) pair, before any session starts.

The admin app's "What an agent sees" page shows this. Nothing is recorded and no session is
opened: the text comes from the same code a session start runs. The policy and the tool list are
the :class:`~.base.MemoryRuntime`'s for the trigger mode, the profile is the service's
``ambient_profile`` (the one ``open_session_context`` records), and the prefix is joined as
``MemoryRuntime.prefix`` joins it. The result has the shape of a recorded prefix
(``service.session_context``), so one view can show both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import MemoryRuntime, join_prefix

if TYPE_CHECKING:
    from ..service import MemoryService

FRAMEWORK = "preview"


def preview_context(service: "MemoryService", agent_id: str, user_id: str, *, trigger_mode: str | None = None,
                    ambient: bool | None = None) -> dict[str, Any]:
    """The prefix a session of ``agent_id`` with ``user_id`` opened now would record.

    ``trigger_mode`` and ``ambient`` default to the settings, as for an adapter. Raises what an
    adapter's construction raises (an unknown trigger mode; in hybrid mode with host-issued memory
    on and no passing fitness result, HostMemoryNotQualifiedError: such an adapter would not start).
    """
    runtime = MemoryRuntime(service, framework=FRAMEWORK, trigger_mode=trigger_mode, ambient=ambient)
    access = service.access(agent_id, user_id)  # validates both ids
    profile = service.ambient_profile(agent_id, user_id) if runtime.ambient else None
    policy = runtime.policy()
    profile_text = profile.text if profile else None
    return {
        "session_id": None, "framework": None, "trigger_mode": runtime.trigger_mode, "recorded_at": None,
        "policy": policy, "ambient_enabled": runtime.ambient, "profile_text": profile_text,
        "profile_items": profile.to_dict()["items"] if profile else [],
        "profile_excluded": profile.excluded if profile else [],
        "profile_limits": profile.limits if profile else {},
        "memory_tools": runtime.tool_schemas(), "offered_tools": None, "system_text": None,
        "adapter_prefix": join_prefix(policy, profile_text), "readable": dict(access.readable),
    }
