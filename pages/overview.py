"""Overview: what the store holds, what waits for review, recent activity and search latency."""

import streamlit as st

from admin_ui.auth.signin import require_identity
from admin_ui.data import actions, overview
from admin_ui.runtime import get_service
from admin_ui.views.dashboard import render_dashboard
from admin_ui.views.health import render_health
from admin_ui.views.widgets import flash, md_escape, show_error, show_flash, table

from memory_core import charts

identity = require_identity()
service = get_service()
st.title("Overview")
show_flash()

stats = overview.store_stats(service)
sizes = overview.review_queue_sizes(service)
cols = st.columns(6)
cols[0].metric("Records", stats["records"])
cols[1].metric("Entities", stats["entities"])
cols[2].metric("Grants", stats["grants"])
cols[3].metric("Sessions", stats["sessions"])
cols[4].metric("Provisional", sizes["provisional"])
cols[5].metric("Review due", sizes["review_due"])
st.caption(md_escape(f"Store {stats['path']} · embedder {stats['embedder']['model']} ({stats['embedder']['dim']} dims) · "
                     f"{stats['indexed_vectors']} vectors indexed · extraction runs queued {sizes['queued_extractions']}, "
                     f"failed {sizes['failed_extractions']}"))
if sizes["failed_extractions"] or sizes["retrying_extractions"]:
    st.warning(md_escape(overview.extraction_trouble(sizes)))

if not stats["records"]:
    st.info("This store is empty. Build the demo store with `agent-memory seed-demo`, or let an agent write through the tools.")

render_dashboard(service)
with st.expander("Store composition now, and the latency of every logged search"):
    st.plotly_chart(charts.store_composition_figure(stats), key="overview_composition")
    left, right = st.columns(2)
    left.plotly_chart(charts.records_over_time_figure(overview.records_over_time(service)), key="overview_over_time")
    right.plotly_chart(charts.latency_histogram_figure(overview.search_latencies(
        service, include_extraction=st.session_state.get("overview_include_extraction", False))), key="overview_latency")

left, right = st.columns(2)
with left:
    st.subheader("Largest scopes")
    table(overview.counts_by_scope(service), key="overview_scopes", empty="No records yet.")
with right:
    st.subheader("Recent events")
    table(overview.recent_events(service), key="overview_events", empty="No events yet.")

render_health(service, identity)

if identity.can("maintain"):
    with st.expander("Maintenance: re-embed every record"):
        st.caption("Re-embeds every record with the configured model (needed after changing the embedder). "
                   "Recalibrate the gate floors afterwards.")
        if st.button("Re-embed now", key="overview_reembed"):
            bar = st.progress(0.0, text="Re-embedding…")
            try:
                count = actions.reembed(service, identity, progress=lambda d, t: bar.progress(d / max(t, 1), text=f"{d} of {t}"))
            except Exception as exc:  # noqa: BLE001
                show_error(exc)
            else:
                flash(f"Re-embedded {count} records")
                st.rerun()
