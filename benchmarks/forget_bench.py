"""Forget latency with and without a concurrent reader, and concurrent opens of a fresh store.

    nice -n 10 .venv/bin/python -m benchmarks.forget_bench [--sizes 1000 10000] [--forgets 30]

For each store size (bulk-loaded synthetic records, packaged embedder): the time of
``memory_forget`` through the tool path with no other connection; the same with another process
inside a read transaction (the case that used to wait 30 s), plus how long after that reader
finishes the forgotten text has left the WAL; and ``memory_write`` timed in the same run as the
reference. Then rounds of 8 processes opening one fresh store at the same instant (issue 12
measured 14 failures in 40 opens). Figures are reported with the load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from memory_core import FixedClock, MemoryService, load_settings  # noqa: E402

from .corpus import OUT, bulk_load, synthetic_texts  # noqa: E402
from .stats import machine, markdown_table, save, summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
READER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT COUNT(*) FROM records").fetchone()
    print("reading", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    conn.close()
    """
)
OPENER = textwrap.dedent(
    """
    import sys, time
    from memory_core.store.db import Store
    start = float(sys.argv[2])
    while time.time() < start:
        time.sleep(0.001)
    Store.open(sys.argv[1], "2026-03-05T10:00:00.000000Z").close()
    """
)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0] if Path("/proc/loadavg").exists() else "n/a"


def timed(fn) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def run(size: int, forgets: int) -> dict:
    path = OUT / f"forget-{size}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    service = MemoryService.open(path, load_settings(), clock=FixedClock("2026-03-05T10:00:00Z"))
    bulk_load(service, size)
    service.grant("bench", "user:user0", read=True, write=True, actor="bench")
    session = service.start_session(agent_id="bench", user_id="user0")
    write_ms, forget_ms, reader_ms, erased_ms = [], [], [], []
    made: list[str] = []
    texts = synthetic_texts(forgets * 2 + 5, seed=4242)  # distinct texts: a near-duplicate would only reinforce

    def forget(record_id: str) -> None:
        result = session.call_tool("memory_forget", {"record_id": record_id, "reason": "bench"})
        assert result["ok"], result

    for i, (_, text, _) in enumerate(texts):
        ms = timed(lambda: made.append(session.call_tool("memory_write", {"type": "episodic", "content": f"{text} (bench {i})"})["record_id"]))
        if i >= 5:
            write_ms.append(ms)
    made = list(dict.fromkeys(made))
    for record_id in made[5:5 + forgets]:
        forget_ms.append(timed(lambda: forget(record_id)))
    for record_id in made[5 + forgets:5 + forgets + max(3, forgets // 3)]:
        reader = subprocess.Popen([sys.executable, "-c", READER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        reader.stdout.readline()
        reader_ms.append(timed(lambda: forget(record_id)))
        released = time.perf_counter()
        reader.stdin.write("\n")
        reader.stdin.flush()
        reader.wait(timeout=30)
        while service.store.erase_pending and time.perf_counter() - released < 30:
            time.sleep(0.01)
        erased_ms.append((time.perf_counter() - released) * 1000)
    service.close()
    return {"size": size, "write_ms": summary(write_ms), "forget_ms": summary(forget_ms),
            "forget_with_reader_ms": summary(reader_ms), "erased_after_reader_ms": summary(erased_ms)}


def concurrent_opens(rounds: int, tmp: Path) -> dict:
    ok = failed = 0
    errors: list[str] = []
    for r in range(rounds):
        path = tmp / f"open-{r}.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        start = time.time() + 2.0
        procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(path), repr(start)], stderr=subprocess.PIPE, text=True,
                                  cwd=ROOT) for _ in range(8)]
        for p in procs:
            if p.wait(timeout=120) == 0:
                ok += 1
            else:
                failed += 1
                errors.append(p.stderr.read().strip().splitlines()[-1])
    return {"opens": ok + failed, "succeeded": ok, "failed": failed, "errors": errors[:5]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--forgets", type=int, default=30)
    parser.add_argument("--open-rounds", type=int, default=5)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    load_before = loadavg()
    runs = [run(size, args.forgets) for size in args.sizes]
    opens = concurrent_opens(args.open_rounds, OUT) if args.open_rounds else {"opens": 0, "succeeded": 0, "failed": 0, "errors": []}
    data = {"machine": machine(), "loadavg_before": load_before, "loadavg_after": loadavg(), "runs": runs, "concurrent_opens": opens}
    rows = []
    for r in runs:
        ref = r["write_ms"]["p50"]
        rows.append([r["size"], ref, r["forget_ms"]["p50"], r["forget_ms"]["p95"], round(r["forget_ms"]["p50"] / ref, 2),
                     r["forget_with_reader_ms"]["p50"], r["forget_with_reader_ms"]["max"],
                     round(r["forget_with_reader_ms"]["p50"] / ref, 2), r["erased_after_reader_ms"]["max"]])
    table = markdown_table(
        ["records", "write p50 ms (reference)", "forget p50 ms", "forget p95 ms", "forget / write",
         "forget with reader p50 ms", "with reader max ms", "with reader / write", "text gone after reader ends, max ms"], rows)
    md = (f"Load average {load_before} before, {data['loadavg_after']} after (2 cores shared with other jobs).\n\n{table}\n\n"
          f"Concurrent opens of a fresh store (8 processes at once, {args.open_rounds} rounds): "
          f"{opens['succeeded']} of {opens['opens']} succeeded.")
    save("forget", data, md)
    print(md)


if __name__ == "__main__":
    main()
