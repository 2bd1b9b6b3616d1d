"""Which agents can read a user's memory, and the searches agents made on her behalf.

For the user role's "My memory" page: a person sees every agent that can read a scope she owns
(a read grant on ``user:<her id>``, which is honoured only while the agent acts for her, or the
agent's own private ``agent:<agent>/<her id>`` scope) and the latest searches logged with her as
the principal. Nothing about another user is read: grants are filtered to her own scope and the
search log to her user id.
"""

from __future__ import annotations

from typing import Any

from memory_core.policy.ambient import owned_by
from memory_core.policy.scopes import parse_scope
from memory_core.service.admin_methods import LogFilter, RecordFilter

from .pagination import Page

LIVE = ["confirmed", "provisional"]


def readers(service, user_id: str) -> list[dict[str, Any]]:
    """One row per (agent, scope) through which an agent can read ``user_id``'s own memory."""
    own = f"user:{user_id}"
    counts = service.record_facet(RecordFilter(statuses=LIVE, owner_user_id=user_id), "scope")
    rows = [{"agent": g["agent_id"], "scope": g["scope"],
             "how": "read and write grant" if g["can_write"] else "read grant",
             "granted by": g["created_by"], "granted at": g["created_at"],
             "live records": int(counts.get(g["scope"], 0))}
            for g in service.grants() if g["scope"] == own and g["can_read"]]
    for scope, held in sorted(counts.items()):
        if scope != own and owned_by(scope, user_id) and held:
            agent = parse_scope(scope).private_parts[0]
            rows.append({"agent": agent, "scope": scope, "how": "its own private scope for you",
                         "granted by": None, "granted at": None, "live records": int(held)})
    return sorted(rows, key=lambda r: (r["agent"], r["scope"]))


def searches_for(service, user_id: str, page: int = 1, page_size: int = 20) -> Page:
    """The newest searches logged with ``user_id`` as the principal, one page."""
    got = service.search_log_page(LogFilter(user_id=user_id), page=page, page_size=page_size)
    rows = [{"at": r["at"], "agent": r["agent_id"], "by": r.get("origin") or "agent", "query": r["raw_query"],
             "results": r["results"], "why empty": r["empty_reason"] if not r["results"] else None}
            for r in got.rows]
    return Page(rows, got.total, got.page, got.page_size)
