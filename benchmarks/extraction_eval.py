"""Extraction quality on labelled transcripts: candidates proposed, accepted, rejected, written, and pollution.

    .venv/bin/python -m benchmarks.extraction_eval [--embedder packaged|hashing] [--extractor offline|anthropic]

Every file in seed_data/extraction_eval/ is replayed into a fresh store through the real host API
(start a session, record turns at their times, end it, run the queued extraction). Each written
record (any status; session summaries aside) is judged against the file's hand-written expected
facts: a record that matches none, or carries a date other than the expected one, is pollution.
The target is zero pollution. Recall is reported too, with the offline extractor's known misses
(``miss_ok``) counted separately.

If seed_data/sessions/ exists (the demo world), its conversations are replayed into one store as
well and their written records are compared with the memory_write calls the demo script makes:
those are not a complete label set, so unmatched records are listed for a person to read rather
than counted as pollution. Results go to benchmarks/results/extraction_eval.{json,md}.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tomllib
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.clock import parse_ts  # noqa: E402
from memory_core.text import quote_fold as fold  # noqa: E402

from .stats import machine, markdown_table, save  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = ROOT / "seed_data" / "extraction_eval"
SESSIONS_DIR = ROOT / "seed_data" / "sessions"
WORLD = ROOT / "seed_data" / "world.toml"
COUNT_KEYS = ("proposed", "accepted", "rejected", "written")


def build_embedder(kind: str, settings):
    if kind == "hashing":
        from tests.fakes import HashingEmbedder

        return HashingEmbedder()
    from memory_core.service import shared_embedder

    return shared_embedder(settings.embedder)


def replay(service: MemoryService, clock: FixedClock, agent: str, user: str, turns: list[dict], project: str | None = None) -> dict:
    """Record one conversation, end it and run its extraction; returns the run's counts and timing."""
    at = parse_ts(turns[0]["at"])
    clock.set(at)
    session = service.start_session(agent_id=agent, user_id=user, project_id=project)
    for turn in turns:
        at = parse_ts(turn["at"]) if turn.get("at") else at
        session.record_turn(turn["role"], turn["text"], at=at)
        at = at + timedelta(minutes=1)
    clock.set(at)
    run_id = session.end()
    began = time.perf_counter()
    detail = service.run_extraction(run_id, worker_id="eval")
    elapsed = round((time.perf_counter() - began) * 1000.0, 1)
    counts = detail.attempts[-1]["detail"].get("counts", {}) if detail.attempts else {}
    return {"session_id": session.id, "run_id": run_id, "status": detail.status, "error": detail.run.get("error"),
            "ms": elapsed, "stages": detail.run.get("stages", {}), **{k: counts.get(k, 0) for k in COUNT_KEYS}}


def summaries_ok(service: MemoryService, session_ids: list[str]) -> bool:
    """Exactly one summary per session, each anchored by a verbatim quote of that session."""
    for session_id in session_ids:
        rows = service.store.query("SELECT evidence FROM records WHERE source_kind = 'session_summary' AND source_ref = ?", (session_id,))
        text = " ".join(fold(t["content"]) for t in service.transcript(session_id))
        if len(rows) != 1 or not rows[0]["evidence"] or fold(rows[0]["evidence"]) not in text:
            return False
    return True


def judge(record: dict, expected: list[dict]) -> tuple[list[str], str | None]:
    """(expected ids the record states, problem): a record states a fact when it has all its words
    and, where the fact is dated, the same date; a record that states none is pollution."""
    content = fold(record["content"])
    matched = [f for f in expected if all(fold(word) in content for word in f["must_include"])]
    if not matched:
        return [], "no expected fact supports it"
    for fact in matched:
        for field in ("review_at", "valid_from", "valid_until"):
            if fact.get(field) and not (record[field] or "").startswith(fact[field]):
                return [], f"{field} is {record[field]}, expected {fact[field]} ({fact['id']})"
    return [f["id"] for f in matched], None


def evaluate_file(path: Path, settings, embedder) -> dict:
    spec = tomllib.loads(path.read_text())
    expected = spec.get("expected", [])
    with tempfile.TemporaryDirectory() as tmp:
        clock = FixedClock(spec["sessions"][0]["start"])
        service = MemoryService.open(Path(tmp) / "eval.sqlite", settings, clock=clock, embedder=embedder)
        service.grant(spec["agent"], f"user:{spec['user']}", read=True, write=True, actor="eval")
        runs = []
        for session in spec["sessions"]:
            start = parse_ts(session["start"])
            turns = [{**t, "at": t.get("at")} for t in session["turns"]]
            turns[0]["at"] = turns[0]["at"] or session["start"]
            runs.append(replay(service, clock, spec["agent"], spec["user"], turns))
            assert start is not None
        rows = [dict(r) for r in service.store.query(
            "SELECT id, content, status, source_kind, review_at, valid_from, valid_until, evidence FROM records "
            "WHERE source_kind != 'session_summary' ORDER BY seq")]
        matched: set[str] = set()
        pollution = []
        for row in rows:
            fact_ids, problem = judge(row, expected)
            if fact_ids:
                matched.update(fact_ids)
            else:
                pollution.append({"content": row["content"], "evidence": row["evidence"], "why": problem})
        ok = summaries_ok(service, [r["session_id"] for r in runs])
        service.close()
    required = [f["id"] for f in expected if not f.get("miss_ok")]
    return {
        "file": path.name, "sessions": len(runs), "runs_succeeded": sum(r["status"] == "succeeded" for r in runs),
        **{k: sum(r[k] for r in runs) for k in COUNT_KEYS},
        "records": len(rows), "pollution": len(pollution), "pollution_detail": pollution,
        "expected": len(expected), "found": len(matched), "required": len(required),
        "required_found": len([f for f in required if f in matched]),
        "missed": [f["id"] for f in expected if f["id"] not in matched], "summaries_ok": ok,
        "extraction_ms": [r["ms"] for r in runs],
    }


def seed_sessions(settings, embedder) -> dict | None:
    """Replay the demo world's conversations (turns only) and compare with its scripted writes."""
    files = sorted(SESSIONS_DIR.glob("*.toml")) if SESSIONS_DIR.is_dir() else []
    if not files:
        return None
    world = tomllib.loads(WORLD.read_text()) if WORLD.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        clock = FixedClock(world.get("start", "2026-01-01T00:00:00Z"))
        service = MemoryService.open(Path(tmp) / "seed.sqlite", settings, clock=clock, embedder=embedder)
        for grant in world.get("grants", []):
            service.grant(grant["agent"], grant["scope"], read=grant.get("read", True), write=grant.get("write", False), actor="eval")
        per_file, unlabelled, scripted_hits = [], [], 0
        for path in files:
            spec = tomllib.loads(path.read_text())
            turns, scripted = [], []
            for step in spec.get("steps", []):
                if "role" in step and "text" in step:
                    turns.append({"role": step["role"], "text": step["text"], "at": step.get("at")})
                elif step.get("tool") == "memory_write" and step.get("args", {}).get("evidence"):
                    scripted.append(fold(step["args"]["evidence"]))
            if not turns or not turns[0]["at"]:
                continue
            result = replay(service, clock, spec["agent"], spec["user"], turns, spec.get("project"))
            rows = service.store.query(
                "SELECT content, evidence FROM records WHERE source_kind != 'session_summary' AND evidence_session_id = ?",
                (result["session_id"],))
            hits = 0
            for row in rows:
                evidence = fold(row["evidence"] or "")
                if any(evidence in s or s in evidence for s in scripted):
                    hits += 1
                else:
                    unlabelled.append({"file": path.name, "content": row["content"], "evidence": row["evidence"]})
            scripted_hits += hits
            per_file.append({"file": path.name, **{k: result[k] for k in COUNT_KEYS}, "status": result["status"],
                             "scripted_writes": len(scripted), "matched_scripted": hits})
        service.close()
    return {"files": per_file, "totals": {k: sum(f[k] for f in per_file) for k in COUNT_KEYS},
            "matched_scripted": scripted_hits, "unlabelled": unlabelled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=("packaged", "hashing"), default="packaged")
    parser.add_argument("--extractor", choices=("offline", "anthropic", "auto"), default=None)
    parser.add_argument("--reviewer", choices=("offline", "anthropic", "auto"), default=None)
    parser.add_argument("--no-save", action="store_true", help="print only; do not overwrite benchmarks/results")
    args = parser.parse_args()
    overrides = {k: v for k, v in (("extractor", args.extractor), ("reviewer", args.reviewer)) if v}
    settings = load_settings(extraction=overrides) if overrides else load_settings()
    embedder = build_embedder(args.embedder, settings)
    files = [evaluate_file(p, settings, embedder) for p in sorted(EVAL_DIR.glob("*.toml"))]
    totals = {k: sum(f[k] for f in files) for k in (*COUNT_KEYS, "records", "pollution", "expected", "found", "required", "required_found")}
    seed = seed_sessions(settings, embedder)
    data = {"machine": machine(), "embedder": args.embedder, "extractor": settings.extraction.extractor,
            "reviewer": settings.extraction.reviewer, "labelled": {"files": files, "totals": totals}, "demo_sessions": seed}

    rows = [[f["file"], f["proposed"], f["accepted"], f["rejected"], f["written"], f["pollution"],
             f"{f['found']}/{f['expected']}", "yes" if f["summaries_ok"] else "NO"] for f in files]
    rows.append(["**total**", totals["proposed"], totals["accepted"], totals["rejected"], totals["written"], totals["pollution"],
                 f"{totals['found']}/{totals['expected']}", ""])
    md = [f"# Extraction evaluation ({settings.extraction.extractor} extractor, {settings.extraction.reviewer} reviewer, {args.embedder} embedder)",
          "", markdown_table(["transcript", "proposed", "accepted", "rejected", "written", "pollution", "recall", "one summary each"], rows),
          "", f"Recall of facts not marked as known offline misses: {totals['required_found']}/{totals['required']}."]
    for f in files:
        for p in f["pollution_detail"]:
            md.append(f"- pollution in {f['file']}: {p['content']!r} ({p['why']})")
    if seed:
        md += ["", "## Demo world sessions (seed_data/sessions, unlabelled)", "",
               markdown_table(["session", "proposed", "accepted", "rejected", "written", "matched scripted writes"],
                              [[f["file"], f["proposed"], f["accepted"], f["rejected"], f["written"], f"{f['matched_scripted']}"] for f in seed["files"]]),
               "", "Written records that match no scripted memory_write (read them):", ""]
        md += [f"- {u['file']}: {u['content']!r} (quote: {u['evidence']!r})" for u in seed["unlabelled"]] or ["- none"]
    markdown = "\n".join(md)
    print(markdown)
    if not args.no_save:
        save("extraction_eval", data, markdown)


if __name__ == "__main__":
    main()
