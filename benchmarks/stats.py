"""Small helpers shared by the benchmark scripts: percentiles and Markdown tables."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def summary(values: list[float]) -> dict[str, float]:
    """p50, p95, mean and max of a list of milliseconds, rounded for reports."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"n": 0}
    return {"n": int(arr.size), "p50": round(float(np.percentile(arr, 50)), 2), "p95": round(float(np.percentile(arr, 95)), 2),
            "mean": round(float(arr.mean()), 2), "max": round(float(arr.max()), 2)}


def machine() -> dict[str, str]:
    import os

    return {"python": platform.python_version(), "cpus": str(os.cpu_count()), "platform": platform.platform()}


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def save(name: str, data: dict, markdown: str, directory: Path = RESULTS) -> None:
    """Write <directory>/<name>.json and .md: by default results/ (committed as the latest
    measurement); the issue 31 scripts pass benchmarks/out/ (git-ignored) and their tables are
    copied into benchmarks/README.md by hand."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    (directory / f"{name}.md").write_text(markdown + "\n")


def rss_mb() -> dict[str, float]:
    """Resident memory of this process now and at its peak (MB), from /proc/self/status."""
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out["rss_mb" if line.startswith("VmRSS") else "peak_rss_mb"] = round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    return out


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (what `cat /proc/loadavg` shows)."""
    return [round(x, 2) for x in os.getloadavg()]
