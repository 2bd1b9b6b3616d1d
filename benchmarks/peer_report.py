"""Report for benchmarks/peer_mem0.py: ratios printed, JSON + Markdown saved, README section."""

from __future__ import annotations

import json
from pathlib import Path

from memory_core.eval import report as rep

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
COMMAND = "nice -n 10 .venv/bin/python -m benchmarks.peer_mem0"


def ratios(result: dict) -> dict:
    """The two targets: recall@10 margin and the p50 latency ratio at 10K (plus every size)."""
    out: dict = {}
    ours, theirs = result["ours"], result["mem0"]
    if "locomo" in ours and "locomo_scores" in theirs:
        out["recall@10_margin"] = ours["locomo"]["recall@10"] - theirs["locomo_scores"]["recall@10"]
    for size in result["sizes"]:
        key = str(size)
        if key in ours.get("latency", {}) and key in theirs.get("latency", {}):
            out[f"p50_ratio_{key}"] = ours["latency"][key]["search_ms"]["p50"] / theirs["latency"][key]["search_ms"]["p50"]
    return out


def markdown(result: dict, r: dict) -> str:
    ours, theirs = result["ours"], result["mem0"]
    lines = [f"Reproduce: `{COMMAND}` (creates `benchmarks/.venv-mem0` on first use; {result['total_s'] / 60:.0f} min this run). "
             f"mem0 {theirs.get('mem0_version')} in raw mode (`add(..., infer=False)`), huggingface embedder on the packaged MiniLM, "
             "local Qdrant; the script's docstring says exactly how it is kept offline. Network attempts blocked during the mem0 "
             f"run: {len(theirs.get('blocked_network_attempts', []))}. Torch intra-op threads: ours "
             f"{result.get('torch_threads', {}).get('ours', '?')}, mem0 {result.get('torch_threads', {}).get('mem0', '?')}.", ""]
    if "locomo" in ours:
        o, t = ours["locomo"], theirs["locomo_scores"]
        lines += [f"LoCoMo, {o['questions']} questions of categories 1–4, the same off-topic questions as the LoCoMo section"
                  + (" (from the previous full run; this run redid only the latency sweep)" if result.get("locomo_from_previous_run") else "")
                  + ":", "",
                  rep.table(["system", "R@5", "R@10", "hit@10", "correct-empty (off-topic)", "search p50 ms"], [
                      ["agent-memory (default settings, full pipeline)", o["recall@5"], o["recall@10"], o["hit@10"], o["correct_empty"],
                       o["search_ms"]["p50"]],
                      ["mem0 (raw mode)", t["recall@5"], t["recall@10"], t["hit@10"], t["correct_empty"],
                       theirs["locomo"]["search_ms"]["p50"]],
                  ]), "",
                  f"recall@10 margin: **{r['recall@10_margin']:+.3f}** (target ≥ +0.10). Our dense generator alone: "
                  f"{o['dense_recall@10']:.3f}.", ""]
    if "latency" in ours:
        rows = []
        for size in result["sizes"]:
            key = str(size)
            if key in ours["latency"] and key in theirs.get("latency", {}):
                a, b = ours["latency"][key]["search_ms"], theirs["latency"][key]["search_ms"]
                rows.append([f"{size:,}", a["p50"], a["p95"], b["p50"], b["p95"], r[f"p50_ratio_{key}"]])
            if key in ours["latency"] and key in theirs.get("latency", {}):
                rows[-1] += [" / ".join(str(x) for x in ours["latency"][key].get("load_average", [])) or "-",
                             " / ".join(str(x) for x in theirs["latency"][key].get("load_average", [])) or "-"]
        lines += [("Search latency from the previous latency sweep (`results/peer_mem0_latency.json`; this run skipped it), "
                   if result.get("latency_from_previous_run") else "Search latency, ")
                  + f"{result['queries']} queries as one of ten users, query embedding inside each call, our "
                  f"query-vector cache off ({result.get('our_runtime', 'torch')} embedder), ms; load average (1 min) before / "
                  "after each side's sweep of that size:", "",
                  rep.table(["records", "ours p50", "ours p95", "mem0 p50", "mem0 p95", "p50 ratio ours/mem0", "load ours",
                             "load mem0"], rows), ""]
        targets = [f"{size:,}: **{r[f'p50_ratio_{size}']:.2f}** (target ≤ {0.5 if size < 10_000 else 0.15})"
                   for size in result["sizes"] if f"p50_ratio_{size}" in r]
        if targets:
            lines.append("p50 ratio ours/mem0 at " + "; ".join(targets) + ".")
    return "\n".join(lines)


def write_report(result: dict, *, update_readme: bool) -> None:
    r = ratios(result)
    result["ratios"] = r
    for key, value in r.items():
        print(f"{key}: {value:.3f}")
    text = markdown(result, r)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "peer_mem0.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / "peer_mem0.md").write_text("# Peer comparison: mem0\n\n" + text + "\n")
    if update_readme:
        rep.replace_section(README, "peer-mem0", text, "## Peer comparison: mem0 (issue 7)")
