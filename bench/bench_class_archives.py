"""Benchmark: what the JVMs' class archives save on a small run.

Runs the same small run (default: `rename_column/rename` with Spark, Hive and Trino, tables
from the cache) alternately with the class archives
(`lakecompat/engines/infra/class_archive.py`) and without them
(`LAKECOMPAT_CLASS_ARCHIVES=off`), each as a process of its own, after one warm-up of each
(which also writes any archive that is missing). Prints the median wall time and CPU seconds
(the run and every process it started) of each, and their ratios.

    .venv/bin/python bench/bench_class_archives.py [--runs N] [--engines E,..] [--scenarios S]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWITCH = "LAKECOMPAT_CLASS_ARCHIVES"
#: lakecompat's command line, from this checkout.
CLI = "import sys; from lakecompat.harness.cli import main; sys.exit(main())"


def one_run(engines: str, scenarios: str, archives: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `lakecompat run` with or without the archives."""
    env = {**os.environ, SWITCH: "on" if archives else "off"}
    with tempfile.TemporaryDirectory(prefix="lakecompat-bench-") as reports:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                CLI,
                "run",
                "--engines",
                engines,
                "--scenarios",
                scenarios,
                "--reports",
                reports,
                "--quiet",
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="counted runs of each (3)")
    parser.add_argument("--engines", default="spark,hive,trino")
    parser.add_argument("--scenarios", default="rename_column/rename")
    args = parser.parse_args()
    figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for index in range(args.runs + 1):
        for archives in (True, False):
            wall, cpu = one_run(args.engines, args.scenarios, archives)
            label = "with" if archives else "without"
            counted = "warm-up" if index == 0 else f"run {index}"
            print(f"{counted}, {label} archives: {wall:.1f} s, {cpu:.1f} CPU-s", flush=True)
            if index:
                figures[archives].append((wall, cpu))
    walls = {k: statistics.median(w for w, _ in v) for k, v in figures.items()}
    cpus = {k: statistics.median(c for _, c in v) for k, v in figures.items()}
    print(f"median with archives:    {walls[True]:.1f} s, {cpus[True]:.1f} CPU-s")
    print(f"median without archives: {walls[False]:.1f} s, {cpus[False]:.1f} CPU-s")
    print(f"ratio: wall {walls[True] / walls[False]:.2f}, CPU {cpus[True] / cpus[False]:.2f}")


if __name__ == "__main__":
    main()
