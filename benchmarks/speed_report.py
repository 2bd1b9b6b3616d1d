"""The issue-16 summary in benchmarks/README.md, built from the saved results of one session's runs.

    .venv/bin/python -m benchmarks.speed_report

Reads benchmarks/results/{search,write,scale,ann_choice}.json and the mem0 peer's results
(peer_mem0_latency.json, saved by hand from a ``--skip-locomo`` run, else peer_mem0.json), and replaces the ``speed`` section of the README: every
target with the figure measured, the load it was measured under and the ratio to the reference
timed in the same run. Run it after the benchmarks; it measures nothing itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from .stats import RESULTS, markdown_table

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
SECTION = "speed"


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _verdict(value: float | None, target: float) -> str:
    if value is None:
        return "not measured"
    return "met" if value <= target else "missed"


def targets_table(search: dict | None, write: dict | None, scale: dict | None, peer: dict | None) -> str:
    rows = []
    runs = {r["records"]: r for r in (search or {}).get("runs", [])}
    for size, target in ((1000, 6.0), (50000, 15.0)):
        if size in runs:
            w = runs[size]["warm"]
            rows.append([f"memory_search p50, {size:,} records", f"≤ {target} ms", w["total_ms"]["p50"], _verdict(w["total_ms"]["p50"], target),
                         f"{w['load_average_before'][0]} / {w['load_average_after'][0]}",
                         f"{w['ratio_p50_to_torch_embedding']} × torch embedding ({w['torch_embedding_ms']['p50']} ms)"])
    if 1000 in runs:
        ratio = runs[1000]["warm"]["ratio_p50_to_torch_embedding"]
        rows.append(["memory_search p50 / bare torch embedding, 1,000 records", "≤ 0.7", ratio, _verdict(ratio, 0.7),
                     f"{runs[1000]['warm']['load_average_before'][0]} / {runs[1000]['warm']['load_average_after'][0]}", "same run"])
    if 50000 in runs:
        w = runs[50000]["warm"]
        rows.append(["memory_search p95, 50,000 records", "≤ 30 ms", w["total_ms"]["p95"], _verdict(w["total_ms"]["p95"], 30.0),
                     f"{w['load_average_before'][0]} / {w['load_average_after'][0]}",
                     f"{round(w['total_ms']['p95'] / w['torch_embedding_ms']['p50'], 3)} × torch embedding p50"])
        cold = min((c["open_and_first_search_ms"] for c in runs[50000]["cold"]), default=None)
        rows.append(["open + first search, 50,000 records", "≤ 2000 ms", cold, _verdict(cold, 2000.0), "see search table", "fresh process"])
    for run in (write or {}).get("runs", []):
        p50 = run["total_ms"]["p50"]
        rows.append([f"memory_write p50, {run['records_before']:,} records", "≤ 8 ms", p50, _verdict(p50, 8.0),
                     " / ".join(str(x) for x in run.get("load_average", [])),
                     f"{run.get('ratio_p50_to_torch_embedding')} × torch embedding ({run.get('torch_embedding_ms', {}).get('p50')} ms)"])
    for run in (scale or {}).get("runs", []):
        if run["records"] >= 1_000_000 and run["mode"] == "approximate":
            p50 = run["total_ms"]["p50"]
            rows.append(["memory_search p50, 1M records, approximate index", "≤ 50 ms", p50, _verdict(p50, 50.0),
                         " / ".join(str(x) for x in run["load_average"]), "-"])
            rec = run.get("recall_at_10_with_ties", run["recall_at_10_vs_exact"])
            rows.append(["dense recall@10 vs exact, 1M records (ties counted)", "≥ 0.98", rec, "met" if rec >= 0.98 else "missed",
                         " / ".join(str(x) for x in run["load_average"]), f"ids only: {run['recall_at_10_vs_exact']}"])
            rows.append(["unreadable ids returned, 1M records", "0", run["unreadable_hits"], "met" if run["unreadable_hits"] == 0 else "missed",
                         "-", "every dense hit and result checked"])
    by_mode = {run["mode"]: run for run in (scale or {}).get("runs", []) if run["records"] >= 1_000_000}
    if "approximate-rebuild" in by_mode and "approximate" in by_mode:
        trained, loaded = by_mode["approximate-rebuild"], by_mode["approximate"]
        if (loaded.get("ivf") or {}).get("from_file"):
            rows.append(["approximate index ready after open began, 1M records (persisted index)", "not retrained on open",
                         f"{loaded['ivf_build_s']} s loaded vs {trained['ivf_build_s']} s trained", "met",
                         f"{' / '.join(str(x) for x in loaded['load_average'])} vs {' / '.join(str(x) for x in trained['load_average'])}",
                         f"IVF part alone: {loaded['ivf'].get('load_s')} s load vs {trained['ivf'].get('build_s')} s train "
                         f"+ {trained['ivf'].get('save_s')} s save"])
    if peer:
        ours, theirs = peer["ours"].get("latency", {}), peer["mem0"].get("latency", {})
        for size in peer.get("sizes", []):
            key = str(size)
            if key in ours and key in theirs:
                ratio = round(ours[key]["search_ms"]["p50"] / theirs[key]["search_ms"]["p50"], 3)
                target = 0.5 if size < 10_000 else 0.15
                rows.append([f"p50 ours / mem0, {size:,} records", f"≤ {target}", ratio, _verdict(ratio, target),
                             f"ours {ours[key].get('load_average')}, mem0 {theirs[key].get('load_average')}",
                             f"{round(ours[key]['search_ms']['p50'], 2)} vs {round(theirs[key]['search_ms']['p50'], 2)} ms"])
    return markdown_table(["target", "goal", "measured", "verdict", "load (1 min) before / after", "reference (same run)"], rows)


def ann_table(ann: dict | None) -> str:
    if not ann:
        return "(benchmarks/ann_choice.py has not been run)"
    rows = []
    for name, r in ann.items():
        rows.append([name, round(r["build_s"], 1), round(r["q_ms"], 2), round(r["recall"], 3),
                     round(r["q_ms_mask"], 2) if "q_ms_mask" in r else "-", round(r["recall_mask"], 3) if "recall_mask" in r else "-"])
    return markdown_table(["index", "build s (200K, one thread)", "top-10 ms", "recall@10", "top-10 ms, 60% mask", "recall@10, 60% mask"], rows)


def main() -> None:
    search, write, scale, ann = _load("search"), _load("write"), _load("scale"), _load("ann_choice")
    peer = _load("peer_mem0_latency") or _load("peer_mem0")  # the --skip-locomo rerun, else the full run
    body = "\n".join([
        "Reproduce: run `benchmarks.search_bench`, `benchmarks.write_bench`, `benchmarks.scale_bench`, `benchmarks.peer_mem0 "
        "--skip-locomo` and `benchmarks/ann_choice.py`, then `.venv/bin/python -m benchmarks.speed_report` (this table).",
        "", targets_table(search, write, scale, peer), "",
        "Approximate index candidates (`benchmarks/ann_choice.py`; 200K synthetic vectors, 200 real queries; the mask is a "
        "random 60% of rows, applied inside the library's search where it can filter):", "", ann_table(ann), "",
        (RESULTS / "scale.md").read_text().strip() if (RESULTS / "scale.md").exists() else "",
    ])
    start, end = f"<!-- {SECTION}:start -->", f"<!-- {SECTION}:end -->"
    text = README.read_text()
    block = f"{start}\n{body}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + f"\n\n## Speed: targets of issue 16\n\n{block}\n"
    README.write_text(text)
    print(body)


if __name__ == "__main__":
    main()
