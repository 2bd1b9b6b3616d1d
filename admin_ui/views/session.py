"""A session's transcript and an extraction candidate, each with its text in full.

Turns, candidate content, evidence and the reviewer's reason are untrusted text: shown only
through ``st.text`` and ``st.code`` (``content_block``), never as markdown or HTML.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ..data.pagination import paginate
from ..data.records import session_info, transcript
from .timefmt import show_time
from .widgets import content_block, md_escape, page_number, pager


def render_session(service, session_id: str, key: str, page_size: int = 20) -> None:
    """One session: who, when, and its transcript turn by turn (paginated)."""
    info = session_info(service, session_id)
    with st.container(border=True, key=key):
        if info is None:
            st.warning(md_escape(f"No session {session_id}."))
            return
        st.markdown(f"**Session** {md_escape(session_id)}")
        st.text(f"agent {info.get('agent_id')} · user {info.get('user_id')} · project {info.get('project_id') or '-'} · "
                f"started {show_time(info.get('started_at'))} · ended {show_time(info.get('ended_at'))}")
        turns = transcript(service, session_id)
        if not turns:
            st.caption("No turns recorded.")
            return
        page = paginate(turns, page_number(f"{key}_turns", session_id), page_size)
        for turn in page.items:
            st.text(f"turn {turn['turn']} · {turn['role']} · {show_time(turn['at'], 'no time')}")
            content_block(turn["content"])
        pager(f"{key}_turns", page, "turns")


def render_candidate(row: dict[str, Any]) -> None:
    """One extraction candidate in full: what was proposed, on what evidence, and what became of it."""
    with st.container(border=True, key="extraction_candidate_detail"):
        st.text(f"Candidate #{row.get('#')} · {row.get('kind')} · {row.get('type')} · source {row.get('source')}")
        st.caption("Content")
        content_block(row.get("content"))
        st.caption(md_escape(f"Evidence (turn {row.get('turn') if row.get('turn') is not None else 'not located'})"))
        content_block(row.get("evidence"))
        st.caption("Reviewer's verdict and reason")
        why = row.get("reviewer's reason") or "no reason given"
        content_block(f"{row.get('verdict') or '-'}: {why}")
        st.caption("Outcome")
        content_block(f"{row.get('outcome') or '-'}"
                      + (f" · {row.get('validator')}" if row.get("validator") else "")
                      + (f" · record {row.get('record_id')}" if row.get("record_id") else ""))
