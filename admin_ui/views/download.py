"""The "Download my memory" box: a file in the export format (docs/export-format.md).

A user downloads the scopes they own; an operator or admin picks any scopes and may add the
sessions the records cite. The file is made when asked for (a button), then offered for download.
"""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data import download
from .widgets import md_escape, show_error

STATE = "download_file"


def render_download(service, identity: Identity) -> None:
    """The download box for ``identity`` (nothing when its role may not download)."""
    if not identity.can("export"):
        return
    user_mode = identity.role == "user"
    with st.expander("Download my memory" if user_mode else "Download memory (export file)", expanded=False):
        scopes = download.downloadable_scopes(service, identity)
        if not scopes:
            st.info("There is no memory to download yet.")
            return
        if user_mode:
            st.caption(md_escape("Everything stored in your scopes (" + ", ".join(scopes) + "), in the export format "
                                 "agent-memory import reads: one JSON line per record with its versions."))
            chosen, sessions = None, False
        else:
            chosen = st.multiselect("Scopes (none: every scope)", scopes, key="download_scopes")
            sessions = st.checkbox("Include the sessions the records cite", key="download_sessions")
        if st.button("Prepare the file", key="download_prepare"):
            try:
                st.session_state[STATE] = download.make_export(service, identity, chosen or None, sessions=sessions)
            except Exception as exc:  # noqa: BLE001 - shown as a sentence, never a traceback
                st.session_state.pop(STATE, None)
                show_error(exc)
        made = st.session_state.get(STATE)
        if made is not None and made.made_for == identity.username:
            st.caption(md_escape(f"{made.records} record(s) and {made.sessions} session(s) from {', '.join(made.scopes)}."))
            st.download_button("Download the file", made.data, file_name=made.name, mime="application/x-ndjson",
                               key="download_file_button")
