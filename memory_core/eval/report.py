"""Writing evaluation results: Markdown tables, plotly figures, and marked README sections.

Figures are saved as standalone HTML (plotly.js from its CDN, so the files stay small) and as
PNG only when kaleido is importable and works offline; nothing here fights a missing exporter.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from .locomo import CATEGORY_NAMES
from .retrieval_eval import VIEW_LABELS, VIEWS


def fmt(value, digits: int = 3) -> str:
    """A number for a table cell ('—' for missing or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: list[str], rows: list[list]) -> str:
    """A GitHub Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def category_groups(agg: dict) -> list[str]:
    return [g for g in agg if g != "overall"]


def save_figure(fig, directory: Path, name: str) -> list[str]:
    """Write ``name.html`` (and ``name.png`` when kaleido works); returns the file names written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    fig.write_html(directory / f"{name}.html", include_plotlyjs="cdn", full_html=True)
    written.append(f"{name}.html")
    try:
        import kaleido  # noqa: F401

        fig.write_image(directory / f"{name}.png", width=900, height=520, scale=1)
        written.append(f"{name}.png")
    except Exception:  # no exporter here: HTML only, as documented
        pass
    return written


def ablation_figure(variants: dict[str, dict]):
    """Grouped bars: recall@10 of each pipeline view, one group per evaluated configuration."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, agg in variants.items():
        fig.add_bar(name=name, x=[VIEW_LABELS[v] for v in VIEWS], y=[agg["overall"][v]["recall@10"] for v in VIEWS])
    fig.update_layout(title="LoCoMo recall@10 by pipeline stage (categories 1–4)", yaxis_title="recall@10",
                      barmode="group", yaxis_range=[0, 1], template="plotly_white")
    return fig


def category_figure(agg: dict, view: str = "full"):
    import plotly.graph_objects as go

    groups = category_groups(agg)
    fig = go.Figure()
    for metric in ("recall@5", "recall@10", "hit@10"):
        fig.add_bar(name=metric, x=[CATEGORY_NAMES[int(g.split(":")[0])] for g in groups], y=[agg[g][view][metric] for g in groups])
    fig.update_layout(title=f"LoCoMo per category ({VIEW_LABELS[view]})", barmode="group", yaxis_range=[0, 1], template="plotly_white")
    return fig


def separation_figure(groups: dict[str, list[float]], floor: float, title: str, xaxis: str = "best dense cosine"):
    """Overlaid histograms of one gate signal per labelled group (answerable, off-topic, ...)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, values in groups.items():
        fig.add_histogram(x=values, name=name, opacity=0.6, nbinsx=50)
    fig.add_vline(x=floor, line_dash="dot", annotation_text=f"floor {floor:.2f}")
    fig.update_layout(barmode="overlay", title=title, xaxis_title=xaxis, template="plotly_white")
    return fig


def replace_section(readme: Path, marker: str, body: str, heading: str) -> None:
    """Put ``body`` between ``<!-- marker:start -->`` and ``<!-- marker:end -->`` in ``readme``,
    appending a new section (with ``heading``) when the markers are absent. Other text is untouched."""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# Benchmarks\n"
    block = f"{start}\n{body.strip()}\n{end}"
    if start in text and end in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + f"\n\n{heading}\n\n{block}\n"
    readme.write_text(text, encoding="utf-8")
