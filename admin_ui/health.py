"""The overview's store-health section (admins only): the ``agent-memory doctor`` report."""

from __future__ import annotations

import streamlit as st

from .actions import require
from .auth import Identity
from .widgets import show_error, table


def health_rows(service, identity: Identity) -> tuple[bool, list[dict], list[dict]]:
    """(ok, one row per check, one row per size) from the doctor; admins only."""
    require(identity, "maintain")
    report = service.doctor()
    checks = [c.to_dict() for c in report.checks]
    sizes = [{"measure": name, "value": value} for name, value in report.sizes.items()]
    return report.ok, checks, sizes


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
