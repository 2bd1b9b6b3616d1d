"""The overview's numbers: store counts, review queue sizes, the dashboard's series, store health.

Each ``*_data`` function shapes one of the service's series for its chart (the figures are in
:mod:`admin_ui.views.dashboard`): running totals per day, latency percentiles, empty-answer
reasons grouped by class.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from ..auth.accounts import Identity
from .actions import require


def store_stats(service) -> dict[str, Any]:
    """Counts by type, status, scope kind and source kind, plus the index and the embedder."""
    return service.stats()


def review_queue_sizes(service) -> dict[str, int]:
    """The overview's counts, with the queued runs that wait after a failed attempt."""
    return service.review_queue_sizes()


def extraction_trouble(sizes: dict[str, int]) -> str:
    """The overview's sentence about extraction runs that need a person (failed, or waiting after a failure)."""
    parts = []
    if sizes.get("failed_extractions"):
        parts.append(f"{sizes['failed_extractions']} extraction run(s) failed")
    if sizes.get("retrying_extractions"):
        parts.append(f"{sizes['retrying_extractions']} wait for another attempt after a failed one")
    return "; ".join(parts) + ". The Extraction page (Status filter) shows why, and an operator can retry them."


def records_over_time(service) -> list[dict]:
    """Records created per day and type."""
    return service.records_over_time()


def counts_by_scope(service, limit: int = 20) -> list[dict]:
    """Live records per scope, largest first."""
    return service.counts_by_scope(limit)


def search_latencies(service, limit: int = 5000, include_extraction: bool = False) -> list[float]:
    """Total milliseconds of the latest logged searches (the extractor's own only when asked for)."""
    return service.search_latencies(limit, include_extraction)


def recent_events(service, limit: int = 15) -> list[dict]:
    """The latest events, newest first."""
    return service.recent_events(limit)


def health_rows(service, identity: Identity) -> tuple[bool, list[dict], list[dict]]:
    """(ok, one row per check, one row per size) from the doctor; admins only."""
    require(identity, "maintain")
    report = service.doctor()
    checks = [c.to_dict() for c in report.checks]
    sizes = [{"measure": name, "value": value} for name, value in report.sizes.items()]
    return report.ok, checks, sizes


# -- the dashboard's series ---------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` with linear interpolation (0.0 for no values)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = q * (len(ordered) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def composition_over_time_data(service) -> list[dict[str, Any]]:
    """Records created so far, by type, at the end of each day that saw a write (tombstones excluded)."""
    rows = service.live_records_per_day()
    running: Counter = Counter()
    out = []
    for day in sorted({r["day"] for r in rows}):
        for r in rows:
            if r["day"] == day:
                running[r["type"]] += r["n"]
        out.extend({"day": day, "type": t, "records": n} for t, n in sorted(running.items()))
    return out


def searches_per_day_data(service, include_extraction: bool = False) -> list[dict[str, Any]]:
    """Per day: searches, empty answers, and p50 / p95 latency in milliseconds (the searches agents
    and people made; the extractor's related-record look-ups too with ``include_extraction``)."""
    by_day: dict[str, list] = defaultdict(list)
    for r in service.search_timings(include_extraction):
        by_day[r["day"]].append((r["total_ms"], r["empty"]))
    out = []
    for day in sorted(by_day):
        ms = [m for m, _ in by_day[day]]
        empty = sum(1 for _, e in by_day[day] if e)
        out.append({"day": day, "searches": len(ms), "empty": empty, "empty_rate": empty / len(ms),
                    "p50_ms": round(percentile(ms, 0.5), 2), "p95_ms": round(percentile(ms, 0.95), 2)})
    return out


# The kinds of empty answer, as (label, pattern on the reason): the first that matches names the
# kind, so reasons that differ only in their numbers, names or floors count together.
REASON_KINDS: tuple[tuple[str, re.Pattern], ...] = tuple((label, re.compile(pattern)) for label, pattern in (
    ("From/To window removed the records", r"event-time window"),
    ("no readable scope (no grant)", r"^no readable scopes"),
    ("no readable record (grants, status or type)", r"^0 readable records|^no record in the readable scopes"),
    ("only superseded or expired records matched", r"^all \d+ candidates filtered as"),
    ("a known name, nothing on the rest", r"^mentions .*, but (nothing about the rest|the rest of the question)"),
    ("weak match: below the relevance floors", r"^(best |no dense candidate|no lexical match|no entity match)"),
    ("no candidates", r"^no candidates"),
))


def reason_class(reason: str) -> str:
    """The kind of an empty answer's reason (one of :data:`REASON_KINDS`); a reason of no known kind
    keeps its first clause with the numbers and details taken out."""
    text = (reason or "").strip()
    for label, pattern in REASON_KINDS:
        if pattern.search(text):
            return label
    text = re.sub(r"\([^)]*\)", "", text)
    text = re.sub(r"\d+(?:\.\d+)?", "N", text)
    return " ".join(text.split(";")[0].split()) or "no reason recorded"


def empty_reasons_data(service, top: int = 6, include_extraction: bool = False) -> dict[str, Any]:
    """The empty-answer rate over the logged searches, and the most common kinds of reason, each
    with one full reason as an example (the extractor's own searches only with ``include_extraction``)."""
    rows = service.search_outcomes(include_extraction)
    empty = [r["empty_reason"] or "" for r in rows if r["empty"]]
    examples: dict[str, str] = {}
    for reason in empty:
        examples.setdefault(reason_class(reason), reason)
    counts = Counter(reason_class(r) for r in empty).most_common(top)
    return {"searches": len(rows), "empty": len(empty), "rate": (len(empty) / len(rows)) if rows else 0.0,
            "reasons": [{"reason": reason, "searches": n, "example": examples[reason]} for reason, n in counts]}


def review_backlog_data(service) -> list[dict[str, Any]]:
    """Per scope: provisional records and review-due flags waiting for a person."""
    return service.review_backlog()


def extraction_outcomes_data(service) -> dict[str, list[dict[str, Any]]]:
    """Runs by status, and the candidates of each run's latest attempt by what became of them."""
    return service.extraction_outcomes()
