"""Plotly charts shared by the admin app and the notebooks.

Every function takes plain data (dicts, lists, or objects with ``to_dict()``) and returns a
``plotly.graph_objects.Figure``; nothing here reads the store. Plotly renders a subset of HTML in
labels, so every label that comes from data is escaped, and record content is never plotted
(records appear by id).
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

GENERATOR_ORDER = ("dense", "lexical", "entity")


def _safe(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _as_dict(value: Any) -> Any:
    return value.to_dict() if hasattr(value, "to_dict") else value


def _layout(fig: go.Figure, title: str, height: int = 360) -> go.Figure:
    fig.update_layout(title=_safe(title), height=height, margin=dict(l=10, r=10, t=50, b=10), legend_title_text="")
    return fig


def empty_figure(message: str) -> go.Figure:
    """A blank figure carrying ``message`` (used when there is nothing to plot)."""
    fig = go.Figure()
    fig.add_annotation(text=_safe(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, "", height=200)


# -- retrieval ---------------------------------------------------------------------------------


def generator_rows(candidates: Iterable[Any]) -> list[dict[str, Any]]:
    """Normalise per-generator candidates to rows ``{record_id, generator, rank, score}``.

    Accepts rows already in that shape, or explanation-like dicts with ``record_id`` and a
    ``generators`` mapping of name → ``{rank, score}``.
    """
    rows: list[dict[str, Any]] = []
    for item in candidates:
        item = _as_dict(item)
        if "generator" in item:
            rows.append({"record_id": item["record_id"], "generator": item["generator"],
                         "rank": item.get("rank"), "score": item.get("score")})
            continue
        for name, detail in (item.get("generators") or {}).items():
            detail = _as_dict(detail) or {}
            rows.append({"record_id": item["record_id"], "generator": name,
                         "rank": detail.get("rank"), "score": detail.get("score")})
    return rows


def generator_ranks_figure(candidates: Iterable[Any], value: str = "rank", title: str | None = None) -> go.Figure:
    """Grouped bars of each record's rank (or score) in each generator (dense, lexical, entity)."""
    rows = generator_rows(candidates)
    if not rows:
        return empty_figure("No generator produced a candidate.")
    records: list[str] = []
    for row in rows:
        if row["record_id"] not in records:
            records.append(row["record_id"])
    by_gen: dict[str, dict[str, Any]] = defaultdict(dict)
    for row in rows:
        by_gen[row["generator"]][row["record_id"]] = row
    names = [g for g in GENERATOR_ORDER if g in by_gen] + sorted(g for g in by_gen if g not in GENERATOR_ORDER)
    fig = go.Figure()
    for name in names:
        ys, hover = [], []
        for rid in records:
            row = by_gen[name].get(rid)
            ys.append(row.get(value) if row else None)
            hover.append(f"{_safe(rid)}<br>{_safe(name)} rank {_safe(row.get('rank')) if row else '-'}"
                         f", score {_safe(_fmt(row.get('score'))) if row else '-'}")
        fig.add_bar(name=_safe(name), x=[_safe(r) for r in records], y=ys, hovertext=hover, hoverinfo="text")
    fig.update_layout(barmode="group")
    if value == "rank":
        fig.update_yaxes(autorange="reversed", title="rank (1 is best)")
    else:
        fig.update_yaxes(title="score")
    return _layout(fig, title or f"Per-generator {value}")


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def stage_rows(stages: Any) -> list[tuple[str, float]]:
    """``{name: ms}``, ``[(name, ms)]`` or ``[{name, ms|elapsed_ms|duration_ms}]`` → ``[(name, ms)]``."""
    if isinstance(stages, Mapping):
        return [(str(k), float(v or 0)) for k, v in stages.items()]
    out = []
    for item in stages or []:
        item = _as_dict(item)
        if isinstance(item, (tuple, list)):
            out.append((str(item[0]), float(item[1] or 0)))
        else:
            ms = next((item[k] for k in ("ms", "elapsed_ms", "duration_ms", "timing_ms") if k in item), 0)
            out.append((str(item.get("name") or item.get("stage")), float(ms or 0)))
    return out


def stage_latency_figure(stages: Any, title: str = "Per-stage latency") -> go.Figure:
    """Horizontal bars of milliseconds per pipeline stage, in pipeline order."""
    rows = stage_rows(stages)
    if not rows:
        return empty_figure("No stage timings recorded.")
    names = [_safe(n) for n, _ in rows]
    fig = go.Figure(go.Bar(x=[ms for _, ms in rows], y=names, orientation="h",
                           text=[f"{ms:.1f} ms" for _, ms in rows], textposition="auto"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title="milliseconds")
    return _layout(fig, title, height=max(220, 28 * len(rows) + 90))


def latency_histogram_figure(values_ms: Iterable[float], title: str = "Search latency") -> go.Figure:
    """Histogram of total search latencies (ms) from the search log, with p50/p95 marked."""
    values = sorted(float(v) for v in values_ms if v is not None)
    if not values:
        return empty_figure("No searches logged yet.")
    fig = go.Figure(go.Histogram(x=values, nbinsx=min(50, max(5, len(values) // 3))))
    for q, label in ((0.5, "p50"), (0.95, "p95")):
        v = values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]
        fig.add_vline(x=v, line_dash="dash", annotation_text=f"{label} {v:.0f} ms")
    fig.update_xaxes(title="milliseconds")
    fig.update_yaxes(title="searches")
    return _layout(fig, title)


# -- store -------------------------------------------------------------------------------------


def store_composition_figure(stats: Mapping[str, Any], title: str = "Store composition") -> go.Figure:
    """Four bar panels: records by type, status, scope kind and source kind (``service.stats()``)."""
    panels = [("by_type", "type"), ("by_status", "status"), ("by_scope_kind", "scope kind"), ("by_source_kind", "source kind")]
    fig = make_subplots(rows=1, cols=4, subplot_titles=[p[1] for p in panels])
    for col, (key, _) in enumerate(panels, 1):
        counts = stats.get(key) or {}
        fig.add_bar(x=[_safe(k) for k in counts], y=list(counts.values()), showlegend=False, row=1, col=col)
    return _layout(fig, title)


def records_over_time_figure(rows: Iterable[Mapping[str, Any]], title: str = "Records created per day") -> go.Figure:
    """Stacked bars of records created per day by type (rows ``{day, type, n}``)."""
    rows = list(rows)
    if not rows:
        return empty_figure("No records yet.")
    by_type: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        by_type[row["type"]][row["day"]] = row["n"]
    fig = go.Figure()
    for kind, counts in sorted(by_type.items()):
        fig.add_bar(name=_safe(kind), x=list(counts), y=list(counts.values()))
    fig.update_layout(barmode="stack")
    return _layout(fig, title)


def generator_rows_from_trace(trace: Any) -> list[dict[str, Any]]:
    """Per-generator candidates of a search trace (``SearchTrace`` or its dict) as chart rows.

    Reads the ``candidates`` output of the dense, lexical and entity stages, so it works for an
    empty response too (candidates existed; the gate turned them all away).
    """
    data = _as_dict(trace) or {}
    rows: list[dict[str, Any]] = []
    for stage in data.get("stages", []):
        stage = _as_dict(stage)
        if stage.get("name") not in GENERATOR_ORDER:
            continue
        for cand in (stage.get("outputs") or {}).get("candidates", []) or []:
            score = next((cand[k] for k in ("cosine", "lexical", "bm25", "score") if k in cand), None)
            rows.append({"record_id": cand.get("id"), "generator": stage["name"], "rank": cand.get("rank"), "score": score})
    return rows
