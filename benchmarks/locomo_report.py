"""Markdown, JSON and figures for benchmarks/locomo_eval.py (kept apart so the runner stays short)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_core.eval import report as rep
from memory_core.eval.gate_calibration import FLOOR_NAMES, REST_NAMES
from memory_core.eval.locomo import CATEGORY_NAMES

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
COMMAND = "nice -n 10 .venv/bin/python -m benchmarks.locomo_eval"
CATS = ("1", "2", "3", "4")


def _halves(result: dict) -> tuple[str, str]:
    a, b = result["folds"]
    return ", ".join(a), ", ".join(b)


def ablation_markdown(result: dict) -> str:
    """One row per change: recall@10 overall, per category, and on each half; gate outcomes."""
    rows = []
    for row in result["ablation"]:
        a = row["all"]
        ce = a.get("correct_empty", {})
        rows.append([row["label"], a["overall"]["recall@5"], a["overall"]["recall@10"],
                     *[a[c]["recall@10"] if c in a else "" for c in CATS],
                     row["half_0"]["overall"]["recall@10"] if row["half_0"] else "",
                     row["half_1"]["overall"]["recall@10"] if row["half_1"] else "",
                     a["overall"]["empty"], ce.get("off_topic", ""), ce.get("named", ""), ce.get("named_verified", ""),
                     *[_half_ce(row, k) for k in ("half_0", "half_1")]])
    return rep.table(["ranking", "R@5", "R@10", *[f"R@10 {CATEGORY_NAMES[int(c)]}" for c in CATS], "R@10 half A", "R@10 half B",
                      "false-empty", "correct-empty off-topic", "correct-empty named", "named verified",
                      "half A: false-empty / named / verified", "half B: false-empty / named / verified"], rows)


def _half_ce(row: dict, half: str) -> str:
    """One half's false-empty and named correct-empty rates (raw and verified) in one cell."""
    h = row.get(half)
    if not h:
        return ""
    ce = h.get("correct_empty", {})
    return " / ".join(rep.fmt(v) for v in (h["overall"]["empty"], ce.get("named"), ce.get("named_verified")))


def category_markdown(result: dict) -> str:
    """The shipped pass per category: each generator alone, the fused list, what was returned."""
    agg = result["passes"]["shipped"]["aggregate"]
    rows = []
    for group in ["overall", *rep.category_groups(agg)]:
        g = agg[group]
        best = max(g[v]["recall@10"] for v in ("dense", "lexical", "entity"))
        rows.append([group, g["questions"], g["dense"]["recall@10"], g["lexical"]["recall@10"], g["entity"]["recall@10"],
                     g["dense_lexical"]["recall@10"], g["fused_fresh"]["recall@10"], g["full"]["recall@10"],
                     g["full"]["recall@10"] - best, g["false_empty"]])
    return rep.table(["category", "questions", "dense", "lexical", "entity", "plain RRF dense+lexical", "fused (+ freshness)",
                      "returned", "returned − best single", "false-empty"], rows)


def _floors_text(floors: dict) -> str:
    """The seven floors, then the known-name model (floor and weights) when it is on."""
    text = " / ".join(f"{floors[n]:g}" for n in FLOOR_NAMES + REST_NAMES)
    if floors.get("name_model_floor", -1) > -1:
        text += f"; model p ≥ {floors['name_model_floor']:g}, weights [{', '.join(f'{w:.3g}' for w in floors['name_model_weights'])}]"
    return text


def calibration_markdown(result: dict) -> str:
    c = result["calibration"]
    sep = c["separation"]
    rows = []
    for fold in c["folds"]:
        tr, ho = fold["train_outcome"], fold["held_out"]
        rows.append([", ".join(fold["train"]), _floors_text(fold["floors"]),
                     tr["false_empty"], tr["correct_empty_off_topic"], tr["correct_empty_named"],
                     ho["false_empty"], ho["correct_empty_off_topic"], ho["correct_empty_named"],
                     ho.get("correct_empty_named_verified"), len(fold["guards"]["lost"]), len(fold["guards"]["leaked"])])
    rule_rows = [[", ".join(fold["train"]),
                  f"{fold['train_outcome']['rule']['floors']['name_rest_cosine']:g} / {fold['train_outcome']['rule']['floors']['name_rest_lexical']:g}",
                  fold["train_outcome"]["rule"]["held_out"]["false_empty"], fold["train_outcome"]["rule"]["held_out"]["correct_empty_named"],
                  fold["held_out"]["false_empty"], fold["held_out"]["correct_empty_named"]]
                 for fold in c["folds"] if fold["train_outcome"].get("rule")]
    shipped = c["shipped"]
    shipped_rows = [[f"half {k[-1:].replace('0', 'A').replace('1', 'B')}", o["false_empty"], o["correct_empty_off_topic"],
                     o["correct_empty_named"], o.get("correct_empty_named_verified")] for k, o in c["shipped_outcome"].items()]
    g = c["shipped_guards"]
    lines = [
        "Procedure: [docs/calibration.md](../docs/calibration.md) (one calibrator, `memory_core/eval/gate_calibration.py`, for "
        "LoCoMo, the fixture `tests/data/gate_calibration.json` and the scenario suite). Floors in the order "
        + " / ".join(f"`{n}`" for n in FLOOR_NAMES + REST_NAMES) + "; then the known-name model's floor `name_model_floor` and "
        "`name_model_weights` (bias; rest cosine, rest lexical, rest joint, cosine, lexical, every name held, rest coverage, "
        "its joint with the rest cosine, share of the rest held), which replaces the two-floor "
        "known-name rule when on.",
        "",
        f"Labelled LoCoMo set (open pass): {sep['answerable']} answerable, {sep['negative']} unanswerable (off-topic and named "
        f"off-topic). Separation (AUC, answerable above unanswerable): best cosine {sep['cosine_auc']:.3f}, best lexical score "
        f"{sep['lexical_auc']:.3f}; an entity match for {sep['entity_rate_answerable']:.1%} of answerable and "
        f"{sep['entity_rate_negative']:.1%} of unanswerable queries. Guard set: {c['guard_samples']} fixture and scenario searches. "
        f"Admissible: false-empty ≤ {c['max_false_empty']} on the training half, fewest guard errors.",
        "",
        rep.table(["trained on", "floors picked", "train false-empty", "train CE off-topic", "train CE named",
                   "held-out false-empty", "held-out CE off-topic", "held-out CE named", "held-out CE named verified",
                   "guards lost", "guards leaked"], rows),
        "",
        "Shipped floors (" + _floors_text(shipped) + f"; guard queries lost {len(g['lost'])}, "
        f"leaked {len(g['leaked'])}) on each half (gate decision replayed from the open pass):",
        "",
        rep.table(["half", "false-empty", "correct-empty off-topic", "correct-empty named", "correct-empty named verified"],
                  shipped_rows),
        "",
        "The two-floor known-name rule (step 5b) that the model replaces, picked and reported the same way:",
        "",
        rep.table(["trained on", "rule floors (name-stripped cosine / other-words lexical)", "held-out false-empty",
                   "held-out CE named", "model: held-out false-empty", "model: held-out CE named"], rule_rows),
    ]
    return "\n".join(lines)


def _labels_text(d: dict) -> str:
    """How many named off-topic questions the label check keeps, and how it fares on answerable ones."""
    labels, check = d.get("named_labels"), d.get("named_label_check_on_answerable")
    if not labels or not check:
        return ""
    reasons = "; ".join(f"{n} because {r}" for r, n in labels["per_reason"].items())
    return (f"Label check of the named set (`memory_core/eval/named_labels.py`, the dataset only, never a search): "
            f"**{labels['verified']} of {labels['questions']} verified**, {labels['doubted']} doubted ({reasons}; a question can "
            f"have several reasons). The same check doubts {check['share_doubted']:.1%} of the answerable questions asked of "
            "their own memory. Every named rate is reported on both sets: *named* (raw) and *verified*.")


def _hand_labelled_text(result: dict) -> str:
    """The hand-labelled named questions (tests/data/named_off_topic.json, LoCoMo part) as asked in the shipped pass."""
    h = result.get("hand_labelled_named")
    if not h or not h["cases"]:
        return ""
    missed = [a["query"] + f" ({a['who']})" for a in h["answers"] if not a["empty"] and not a["problems"]]
    return (f"**Hand-labelled named questions** (`tests/data/named_off_topic.json`, absence checked by reading and by words): "
            f"{sum(a['empty'] for a in h['answers'] if not a['problems'])} of {h['checked']} come back empty "
            f"(correct-empty {h['correct_empty']:.3f})" + (f"; let through: {'; '.join(missed)}" if missed else "") + ".")


def locomo_markdown(result: dict, figures: list[str]) -> str:
    d, t = result["dataset"], result["timings"]
    shipped = result["passes"]["shipped"]
    s = result["settings"]
    half_a, half_b = _halves(result)
    overall = shipped["aggregate"]["overall"]
    lines = [
        f"Reproduce: `{COMMAND}` ({t['total_s'] / 60:.0f} min this run; `--limit 2` for a quick look). Dataset read from "
        "`../shared/data/locomo/locomo10.json` (CC BY-NC 4.0; override with `$MEMORY_LOCOMO_PATH`), never copied here. "
        f"Machine: {result['machine'].get('cpus', '?')} CPUs, load average {result['machine'].get('loadavg', '?')}.",
        "",
        f"- Store: {d['conversations']} conversations → {d['conversations']} users, {d['turns']} turns written through the write "
        f"path as episodic records ({result['ingest']['records']} records; {result['ingest']['merged_turns']} near-duplicate turns "
        "reinforced an earlier record, which is then credited with them).",
        f"- Questions: {d['answerable_questions']} answerable (categories 1–4 with evidence), {d['off_topic_questions']} off-topic "
        f"(another conversation's questions) and {d['named_off_topic_questions']} named off-topic (the same, rewritten to name this "
        "conversation's speakers), asked with limit 10 by an agent with a read grant. " + _labels_text(d),
        f"- Halves: A = {half_a}; B = {half_b}. Constants are chosen on one half and reported on the other.",
        f"- Shipped retrieval defaults: RRF k {s['rrf_k']:g}, cosine floor {s['cosine_floor']:g} "
        f"({s['cosine_floor_unknown_name']:g} for a query naming only unknown names), lexical floor {s['lexical_floor']:g}, entity "
        f"support cosine {s['entity_support_cosine']:g} / lexical {s['entity_support_lexical']:g}, freshness weight "
        f"{s['freshness_weight']:g} ({s['freshness_scope']}, half-life {s['freshness_half_life_days']:g} d), "
        f"name-stripped list in the fusion {'on' if s.get('rest_list_in_fusion') else 'off'}, known-name model floor "
        f"{s.get('name_model_floor', -1):g} (-1: off; then name-stripped cosine {s['name_rest_cosine']:g} / other-words lexical "
        f"{s['name_rest_lexical']:g}), "
        f"{s['candidates_per_generator']} candidates per generator; embedder {result['embedder']['model']} "
        f"(version {result['embedder']['version']}).",
        "",
        f"**Shipped pipeline** (memory_search as shipped): recall@10 **{overall['full']['recall@10']:.3f}** (R@5 "
        f"{overall['full']['recall@5']:.3f}), correct-empty off-topic **{shipped['correct_empty']:.3f}**, named off-topic "
        f"{shipped['correct_empty_named']:.3f}, false-empty **{shipped['false_empty']:.3f}**; search p50 "
        f"{shipped['latency_ms']['total']['p50']:.1f} ms (questions pre-embedded). Targets: recall@10 ≥ 0.62 and ≥ the best single "
        "generator in every category, correct-empty ≥ 0.90, false-empty ≤ 0.03.",
        "",
        _hand_labelled_text(result),
        "",
        "Shipped pass per half (the shipped constants are the pick trained on half A, so half B's row is held out), and the "
        "same pass with the short-list rule off (`short_list_names_need_rest`, a rule without constants, not replayable "
        "from the open pass):",
        "",
        rep.table(["pass", "half", "recall@10", "false-empty", "correct-empty off-topic", "correct-empty named", "named verified"],
                  [[label, f"half {'AB'[int(k[-1])]}", h["recall@10"], h["false_empty"], h["correct_empty"], h["correct_empty_named"],
                    h["correct_empty_named_verified"]]
                   for label, name in (("shipped", "shipped"), ("without the short-list rule", "no_short_list_rule"))
                   if name in result["passes"] for k, h in result["passes"][name].get("per_half", {}).items()]),
        "",
        "**Per category** (shipped pass):",
        "",
        category_markdown(result),
        "",
        "**Ablation** (open pass replayed: each row changes one thing; `…` continues the row above; the last replayed row is the "
        "shipped configuration before duplicate collapse and the token budget):",
        "",
        ablation_markdown(result),
        "",
        "RRF k, chosen on one half (entity list out when full, name-stripped list in as shipped, no freshness, no gate) and checked on the other: "
        + "; ".join(f"trained on {', '.join(r['train'])}: best k {r['best_k']:g} (train "
                    + ", ".join(f"k {k}: {v:.3f}" for k, v in r["train_recall"].items())
                    + f"), held-out recall@10 {r['held_out_recall@10']:.3f}" for r in result["rrf_k_choice"]) + ".",
        "",
    ]
    lat = shipped["latency_ms"]
    lines += ["**Search latency by stage** (shipped pass, ms; questions pre-embedded):", "",
              rep.table(["stage", "p50", "p95", "mean"], [[k, v["p50"], v["p95"], v["mean"]] for k, v in lat.items()]), ""]
    if figures:
        lines.append("Figures: " + ", ".join(f"[{f}](results/locomo/{f})" for f in figures) + ".")
    return "\n".join(lines)


def write_reports(result: dict, passes: dict, *, update_readme: bool, limit: int | None) -> None:
    """results/locomo.{json,md}, figures, and the README sections (full runs only)."""
    stem = "locomo" if not limit else f"locomo-limit{limit}"
    figures_dir = RESULTS / stem
    figures: list[str] = []
    aggs = {name: p["aggregate"] for name, p in result["passes"].items()}
    figures += rep.save_figure(rep.ablation_figure(aggs), figures_dir, "ablation")
    figures += rep.save_figure(rep.category_figure(aggs["shipped"]), figures_dir, "categories")
    feats = passes["open"]["features"]
    groups = {kind: [f.cosine for f in feats if f.kind == kind and f.cosine is not None] for kind in ("answerable", "off_topic", "named")}
    figures += rep.save_figure(rep.separation_figure(groups, result["settings"]["cosine_floor"],
                                                     "Best dense cosine by label (LoCoMo, open pass)"), figures_dir, "separation")
    lex = {kind: [f.lexical for f in feats if f.kind == kind and f.lexical is not None] for kind in ("answerable", "off_topic", "named")}
    figures += rep.save_figure(rep.separation_figure(lex, result["settings"]["lexical_floor"], "Best lexical score by label",
                                                     "best lexical score"), figures_dir, "separation_lexical")
    locomo_md = locomo_markdown(result, figures).replace("results/locomo/", f"results/{stem}/")
    calib_md = calibration_markdown(result)
    if limit:
        locomo_md = f"(partial run: first {limit} conversations)\n\n" + locomo_md
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / f"{stem}.md").write_text(f"# LoCoMo retrieval evaluation\n\n{locomo_md}\n\n## Gate calibration\n\n{calib_md}\n")
    if update_readme and not limit:
        rep.replace_section(README, "locomo-eval", locomo_md, "## LoCoMo retrieval quality (issue 7)")
        rep.replace_section(README, "gate-calibration", calib_md, "## Gate-floor calibration (issue 7)")
