"""The search explorer's logic: run the real pipeline as a principal, reopen logged searches.

The app never filters or ranks anything itself: a search here is ``service.search`` with the
chosen agent and user, so it applies exactly that agent's grants, no more. Logged searches are
rebuilt from the search log (``SearchResponse`` with ``from_log``) and can be replayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Any

from memory_core import charts
from memory_core.clock import format_ts, parse_ts


# What the explorer's From/To fields filter, said beside them.
WINDOW_HELP = ("Keeps only records whose event time (when the thing happened, not when it was written) falls in this "
               "window; a record with no event time is left out too. The time_window stage counts what it removed.")


@dataclass
class SearchForm:
    """What the explorer's widgets collected."""

    agent_id: str
    user_id: str
    query: str
    types: list[str] = field(default_factory=list)
    time_from: date | None = None
    time_to: date | None = None
    entity_hints: str = ""
    limit: int | None = None
    historical: bool = False
    rewrite: bool | None = None
    rerank: bool | None = None
    context: str | None = None
    as_of_date: date | None = None  # the as-of instant's day, in UTC (None: no as-of search)
    as_of_time: time | None = None  # its time of day in UTC (None: the end of that day)
    as_of_mode: str = "memory"  # AS_OF_MODES: what the memory held then, or what was valid then

    def as_of(self) -> str | None:
        """The as-of instant as a UTC timestamp with its offset (the explorer's boxes are UTC)."""
        if self.as_of_date is None:
            return None
        return format_ts(datetime.combine(self.as_of_date, self.as_of_time or time.max, tzinfo=timezone.utc))

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``service.search``."""
        def day(value: date | None, end: bool = False) -> str | None:
            if value is None:
                return None
            moment = datetime.combine(value, time.max if end else time.min, tzinfo=timezone.utc)
            return format_ts(moment)

        hints = [h.strip() for h in self.entity_hints.split(",") if h.strip()]
        return {
            "agent_id": self.agent_id.strip(), "user_id": self.user_id.strip(), "query": self.query,
            "types": list(self.types) or None, "time_from": day(self.time_from), "time_to": day(self.time_to, end=True),
            "entity_hints": hints or None, "limit": self.limit, "historical": self.historical,
            "rewrite": self.rewrite, "rerank": self.rerank, "context": self.context or None,
            "as_of": self.as_of(), "as_of_mode": self.as_of_mode if self.as_of_date is not None else None,
        }


@dataclass(frozen=True)
class ExplorerOptions:
    """The bounds and the optional stages the explorer's form offers, from the service's settings."""

    max_limit: int
    default_limit: int
    max_query_chars: int
    rewrite_available: bool
    rewrite_default: bool
    rerank_available: bool
    rerank_default: bool


def explorer_options(service) -> ExplorerOptions:
    """What the form may offer: the limit's bounds, the query's length, and rewrite or rerank where configured."""
    r = service.settings.retrieval
    return ExplorerOptions(max_limit=r.max_limit, default_limit=r.default_limit, max_query_chars=r.max_query_chars,
                           rewrite_available=service.models.rewrite is not None, rewrite_default=r.rewrite_enabled,
                           rerank_available=bool(r.reranker_model_path), rerank_default=r.reranker_enabled)


def contents_of(service, response) -> dict[str, str]:
    """Content of every record a stage mentions, from the results first, then the store."""
    contents = {r.record_id: r.content for r in response.results if r.content}
    wanted: set[str] = set()
    for stage in response.trace.stages:
        wanted |= ids_in(stage.outputs or {}) | ids_in(stage.dropped)
    missing = [rid for rid in wanted if rid not in contents]
    for rid, record in (service.records_by_ids(missing) if missing else {}).items():
        contents[rid] = record.content if record.status != "deleted" else "(forgotten: content erased)"
    return contents


def form_problem(agent: str | None, user: str | None, query: str | None, max_chars: int) -> str | None:
    """What is missing or wrong in the explorer's form, in one sentence (None when it can run)."""
    problems = []
    if not (agent or "").strip():
        problems.append("choose an agent")
    if not (user or "").strip():
        problems.append("choose the user it acts for")
    text = query or ""
    if not text.strip():
        problems.append("type a query" if not text else "type a query (this one is only whitespace)")
    if problems:
        sentence = ", ".join(problems[:-1]) + (" and " if len(problems) > 1 else "") + problems[-1]
        return sentence[0].upper() + sentence[1:] + "."
    if len(text) > max_chars:
        return f"The query is {len(text):,} characters long; the limit is {max_chars:,}. Shorten it and search again."
    return None


def run_search(service, form: SearchForm):
    """Run the real pipeline as (agent, user); the search is logged like an agent's (origin ``admin``)."""
    return service.search(**form.kwargs(), origin="admin")


def load_search(service, search_id: str):
    """A logged search rebuilt as a ``SearchResponse`` with ``from_log`` set (by id)."""
    return service.load_search(search_id)


def replay_search(service, search_id: str):
    """Run a logged search's request again now (a new, logged search marked as a replay)."""
    return service.replay_search(search_id)


def recent_searches(service, limit: int = 50) -> list[dict[str, Any]]:
    """The latest logged searches for the picker."""
    return service.recent_searches(limit)


# -- presentation data -------------------------------------------------------------------------


def result_rows(response) -> list[dict[str, Any]]:
    """One row per returned record: rank, signals and the text handed back."""
    rows = []
    for result in response.results:
        e = result.explanation
        rows.append({
            "rank": e.rank, "id": e.record_id, "type": e.type, "status": e.status, "scope": e.scope,
            "matched_by": ", ".join(e.matched_by), "fused_rank": e.fused_rank,
            "cosine": None if e.cosine is None else round(e.cosine, 4), "gate": e.gate,
            "content": result.content if result.content is not None else "(not stored in the log)",
        })
    return rows


def stage_rows(response) -> list[dict[str, Any]]:
    """The stage table: name, ran/skipped, ms, how many candidates it dropped, the readable records
    left by the filter stages (before any candidate exists), first note."""
    rows = response.trace.stage_rows()
    for row, stage in zip(rows, response.trace.stages):
        left = (stage.outputs or {}).get("readable_records")
        row["readable left"] = "" if left is None else str(left)
    return rows


def generator_rows(response) -> list[dict[str, Any]]:
    """One row per candidate and generator: rank and score (for the explorer's charts)."""
    return charts.generator_rows_from_trace(response.trace)


def empty_headline(response) -> str | None:
    """The sentence the explorer shows first when nothing came back."""
    if response.results:
        return None
    reason = response.empty_reason or response.explanation.empty_reason or "no reason was recorded"
    return f"No memory returned: {reason}"


def _stage_number(stages, name: str) -> int | None:
    return next((n for n, st in enumerate(stages, 1) if st.name == name), None)


def dropping_stage(response) -> int | None:
    """The 1-based number of the stage that left nothing to return (None if something was returned).

    A search whose filters left no readable record was emptied before any candidate existed, so the
    stage is the time window (when it removed them all) or the hard filter, not the first generator
    that found nothing."""
    if response.results or not response.trace.stages:
        return None
    stages = response.trace.stages
    window, hard = _stage_number(stages, "time_window"), _stage_number(stages, "hard_filter")
    if window and (stages[window - 1].outputs or {}).get("readable_records") == 0 \
            and (stages[window - 1].outputs or {}).get("removed"):
        return window
    if hard and (stages[hard - 1].outputs or {}).get("readable_records") == 0:
        return hard
    for number in range(len(stages), 0, -1):
        if stages[number - 1].dropped:
            return number
    for number, stage in enumerate(stages, 1):  # nothing dropped: the first stage that produced nothing
        outputs = stage.outputs or {}
        if stage.status == "ran" and any(isinstance(v, list) and not v for v in outputs.values()):
            return number
    return None


def window_stage(response) -> tuple[int, int] | None:
    """(stage number, records removed) of the time-window stage of an empty answer when the From/To
    window removed readable records, so the explorer can point at it beside the stage that emptied it."""
    if response.results:
        return None
    number = _stage_number(response.trace.stages, "time_window")
    removed = (response.trace.stages[number - 1].outputs or {}).get("removed") if number else None
    return (number, int(removed)) if removed else None


def request_fields(response) -> dict[str, Any]:
    """The explorer's widget values that reproduce a search's request (for "edit and re-run")."""
    req = response.request
    get = (lambda name, default=None: getattr(req, name, default))
    return {
        "explorer_agent": get("agent_id"), "explorer_user": get("user_id"), "explorer_query": get("query") or "",
        "explorer_types": list(get("types") or []), "explorer_hints": ", ".join(get("entity_hints") or []),
        "explorer_historical": bool(get("historical", False)),
        **({"explorer_limit": int(get("limit"))} if get("limit") else {}),
        **as_of_fields(get("as_of"), get("as_of_mode")),
    }


AS_OF_LABELS = {"memory": "what the memory held then", "world": "what was valid in the world then"}


def as_of_fields(as_of: str | None, mode: str | None) -> dict[str, Any]:
    """The explorer's As-of widget values for a logged request's ``as_of`` (cleared when it had none)."""
    if not as_of:
        return {"explorer_as_of_date": None, "explorer_as_of_time": None, "explorer_as_of_mode": "memory"}
    moment = parse_ts(as_of)
    return {"explorer_as_of_date": moment.date(), "explorer_as_of_time": moment.time().replace(tzinfo=None),
            "explorer_as_of_mode": mode or "memory"}


def as_of_line(response) -> str | None:
    """One line saying which instant and mode an as-of search searched (None for a normal search)."""
    req = response.request
    if not getattr(req, "as_of", None):
        return None
    return f"As of {req.as_of}: {AS_OF_LABELS.get(req.as_of_mode or 'memory', req.as_of_mode)}"


def with_content(items: Any, contents: dict[str, str]) -> Any:
    """``items`` (stage outputs or dropped lists) with each record id's content added beside it."""
    if isinstance(items, list):
        return [with_content(item, contents) for item in items]
    if isinstance(items, dict):
        out = {k: with_content(v, contents) for k, v in items.items()}
        rid = items.get("id") or items.get("record_id")
        if isinstance(rid, str) and rid in contents and "content" not in out:
            out["content"] = contents[rid]
        return out
    return items


def ids_in(items: Any) -> set[str]:
    """Every record id mentioned in a stage's outputs or dropped list."""
    found: set[str] = set()
    if isinstance(items, list):
        for item in items:
            found |= ids_in(item)
    elif isinstance(items, dict):
        for k, v in items.items():
            if k in ("id", "record_id") and isinstance(v, str):
                found.add(v)
            else:
                found |= ids_in(v)
    return found


def scope_rows(response) -> list[dict[str, str]]:
    """The scopes the search could read, each with the policy's reason."""
    return [{"scope": scope, "why readable": why} for scope, why in sorted(response.explanation.scopes.items())]


def known_name_line(gate_outputs: dict[str, Any]) -> str | None:
    """One line for the stage stepper on how the gate judged a question naming a known entity
    (the known-name model's probability against its floor, or the two-floor rule's values)."""
    names = gate_outputs.get("known_names") or []
    if not names:
        return None
    model = gate_outputs.get("name_model")
    if model:
        verdict = "passes" if model["probability"] >= model["floor"] else "refuses"
        features = ", ".join(f"{k} {'none' if v is None else f'{v:.2f}'}" for k, v in model["features"].items())
        return (f"Known-name model for {', '.join(names)}: p {model['probability']:.3f} vs floor {model['floor']:g} "
                f"({verdict}); {features}")
    cosine, lexical = gate_outputs.get("best_rest_cosine"), gate_outputs.get("best_rest_lexical")
    if gate_outputs.get("known_names_short"):
        joint = gate_outputs.get("best_rest_cover_joint")
        return (f"Short-list rule for {', '.join(names)} (a name linking few records needs the rest of the question): "
                f"best cosine without the names {'none' if cosine is None else f'{cosine:.2f}'}, with half its coverage of the "
                f"other words {'none' if joint is None else f'{joint:.2f}'}, best lexical on the other words "
                f"{'none' if lexical is None else f'{lexical:.2f}'}")
    return (f"Known names {', '.join(names)}: best cosine without the names "
            f"{'none' if cosine is None else f'{cosine:.2f}'}, best lexical on the other words "
            f"{'none' if lexical is None else f'{lexical:.2f}'}")
