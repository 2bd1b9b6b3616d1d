"""The explorer's score chart: one panel per generator, each on its own scale, bars labelled by content.

Cosine similarity and the lexical score (the share of the query's weighted terms a record holds)
mean different things, so each generator gets a panel. Labels are the first words of each record's content: memory text is untrusted, so it
is HTML-escaped (plotly would otherwise render tags such as ``<a>`` or ``<b>`` in labels).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from memory_core.charts import GENERATOR_ORDER, empty_figure, generator_rows

SCALES = {"dense": "cosine similarity", "lexical": "lexical score (0 to 1)", "entity": "entity match score"}


def plain(text: object) -> str:
    """Text plotly shows as written: HTML metacharacters escaped, and no leading $ (LaTeX)."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace("$", "&#36;")


def snippet(text: str | None, record_id: str, width: int = 42) -> str:
    """A short label for a record: the start of its content, or its id when the content is gone."""
    if not text:
        return record_id
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= width else one_line[: width - 1].rstrip() + "…"


def scores_figure(candidates: Any, contents: dict[str, str]) -> go.Figure:
    """Horizontal bars of each candidate's score, one subplot per generator with its own x axis."""
    rows = [r for r in generator_rows(candidates) if r.get("score") is not None]
    if not rows:
        return empty_figure("No generator scored a candidate.")
    present = {r["generator"] for r in rows}
    names = [g for g in GENERATOR_ORDER if g in present] + sorted(present - set(GENERATOR_ORDER))
    counts = [sum(1 for r in rows if r["generator"] == n) for n in names]
    # One panel per generator, stacked, each as tall as its bars need, each with its own x axis.
    fig = make_subplots(rows=len(names), cols=1, subplot_titles=[plain(SCALES.get(n, n)) for n in names],
                        row_heights=[max(c, 2) for c in counts], vertical_spacing=0.3 / max(len(names), 1))
    for row, name in enumerate(names, 1):
        mine = sorted((r for r in rows if r["generator"] == name), key=lambda r: r["score"])
        labels = [plain(snippet(contents.get(r["record_id"]), r["record_id"])) for r in mine]
        fig.add_trace(go.Bar(x=[r["score"] for r in mine], y=labels, orientation="h", name=plain(name),
                             hovertext=[plain(f"{r['record_id']} · rank {r.get('rank')}") for r in mine],
                             hoverinfo="text+x"), row=row, col=1)
        if name == "dense":
            fig.update_xaxes(range=[0, 1], row=row, col=1)
    fig.update_layout(showlegend=False, height=90 + 22 * sum(max(c, 2) for c in counts) + 70 * len(names),
                      margin=dict(l=10, r=10, t=60, b=10), title_text="Per-generator score")
    return fig
