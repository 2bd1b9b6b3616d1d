"""The overview's store-health section (admins only): the ``agent-memory doctor`` report."""

from __future__ import annotations

import streamlit as st

from ..auth.accounts import Identity
from ..data.overview import health_rows
from .widgets import show_error, table


def render_health(service, identity: Identity) -> None:
    """An expander that runs the doctor on demand (it reads the whole file, so not on every render)."""
    if not identity.can("maintain"):
        return
    with st.expander("Store health (agent-memory doctor)"):
        st.caption("Integrity and FTS checks, vectors against the store, change feed, orphan rows and log sizes.")
        if st.button("Run the checks", key="overview_doctor"):
            try:
                ok, checks, sizes = health_rows(service, identity)
            except Exception as exc:  # noqa: BLE001 - shown to the admin
                show_error(exc)
                return
            (st.success if ok else st.error)("No problems found." if ok else "Problems found: see the checks marked fail.")
            table(checks, key="overview_doctor_checks")
            table(sizes, key="overview_doctor_sizes")
