"""Who is talking: the identity an adapter recovers from a framework's run context.

Every memory call runs as one principal (agent id, user id) inside one session, and a session may
name a project. Adapters read these from explicit places in the framework's run context (LangGraph's
``configurable``; CrewAI's equipped agent and kickoff inputs, see docs/adapters.md) and hand them
to :func:`require_identity`. A missing or malformed value is refused with :class:`IdentityError`
naming the key and where it was looked for; nothing is defaulted, derived from a display name or
guessed, because a wrong principal reads or writes another user's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import IdentityError, InvalidInputError
from ..policy.scopes import validate_id


@dataclass(frozen=True)
class Identity:
    """The principal and session of one framework run."""

    agent_id: str
    user_id: str
    session_id: str
    project_id: str | None = None


def require_identity(
    source: str, *, agent_id: object, user_id: object, session_id: object, project_id: object = None,
    keys: dict[str, str] | None = None,
) -> Identity:
    """An :class:`Identity` from values read out of ``source`` (a phrase such as "LangGraph
    config['configurable']"), or IdentityError listing every missing or malformed value.

    ``keys`` maps each field to the name the host must set (shown in the error).
    """
    keys = keys or {}
    values = {"agent_id": agent_id, "user_id": user_id, "session_id": session_id}
    missing = [field for field, value in values.items() if value is None or value == ""]
    if missing:
        names = ", ".join(keys.get(field, field) for field in missing)
        raise IdentityError(
            f"{source} does not say {names}; an adapter never guesses who is talking. Set "
            f"{'it' if len(missing) == 1 else 'them'} explicitly (see docs/adapters.md)",
            missing=[keys.get(field, field) for field in missing], source=source,
        )
    if project_id == "":
        project_id = None
    problems = []
    for field, value in (*values.items(), ("project_id", project_id)):
        if field == "project_id" and value is None:
            continue
        try:
            validate_id(value, keys.get(field, field))
        except InvalidInputError as exc:
            problems.append(exc.message)
    if problems:
        raise IdentityError(f"{source}: " + "; ".join(problems), source=source)
    return Identity(str(agent_id), str(user_id), str(session_id), None if project_id is None else str(project_id))


def require_agent_id(source: str, agent_id: object) -> str:
    """``agent_id`` if it is a usable id, else IdentityError (for adapters that bind it at set-up)."""
    try:
        return validate_id(agent_id, "agent_id")
    except InvalidInputError as exc:
        raise IdentityError(f"{source}: {exc.message}", source=source) from None
