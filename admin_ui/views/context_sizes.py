"""The context window view: each part of what a model was given, its estimated tokens and share.

Part names and details can quote record ids and statuses only, never memory text; the chart's
labels are escaped for plotly all the same (:func:`~admin_ui.views.search_charts.plain`).
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from ..data.context_sizes import TOKEN_RULE, Part, total_tokens
from .search_charts import plain
from .widgets import md_escape, table


def render_parts(parts: list[Part], key: str, *, title: str = "Context window, part by part") -> None:
    """A table of the parts with tokens and share, one stacked bar of the whole, and how tokens are counted."""
    with st.container(key=key):
        st.markdown(f"**{md_escape(title)}**")
        st.caption(md_escape(f"About {total_tokens(parts):,} tokens in all. {TOKEN_RULE}"))
        if not parts:
            st.info("Nothing was recorded for this context.")
            return
        known = [p for p in parts if p.tokens]
        if known:
            fig = go.Figure()
            for p in known:
                fig.add_trace(go.Bar(x=[p.tokens], y=["tokens"], orientation="h", name=plain(p.part),
                                     hovertext=plain(f"{p.part}: {p.tokens} tokens ({p.share:.1%})"), hoverinfo="text"))
            fig.update_layout(barmode="stack", height=190, margin=dict(l=10, r=10, t=10, b=10),
                              legend=dict(orientation="h", y=-0.4), yaxis=dict(showticklabels=False))
            st.plotly_chart(fig, key=f"{key}_chart", config={"displayModeBar": False})
        # tall enough to show every part at once (a context window is read as a whole)
        table([p.row() for p in parts], key=f"{key}_table", height=min(40 + 35 * len(parts), 1200))
