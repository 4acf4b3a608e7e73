"""Benchmark: the Iceberg writer alone (issue 35), the cost the default matrix takes on when
Iceberg tables join it.

Run with `.venv/bin/python bench/bench_iceberg_writer.py [--scenarios GLOBS]`. Writes every
table of the catalog (both table types) with Spark and Iceberg's runtime into a fresh folder,
no table cache, and prints: the wall time with the start of Spark's process, the seconds per
table (mean, 95th percentile), the CPU seconds of the whole process tree, and how many tables
were written, refused by Iceberg (`REJECTED`) or left out (a Hudi-only step). Writes
`bench/iceberg-writer-results.json`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench_run import ProcessSampler, p95, report, say

from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.writer import create_writer


def measure(pattern: str | None) -> dict[str, object]:
    scenarios = load_scenarios(ROOT / "scenarios", pattern)
    sampler = ProcessSampler()
    sampler.start()
    seconds: list[float] = []
    counts = {"written": 0, "rejected": 0, "failed": 0, "left_out": 0}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        runtime = SparkRuntime(Path(scratch) / "logs")
        writer = create_writer(runtime, Path(scratch) / "tables", 600, "iceberg")
        try:
            for scenario in scenarios:
                if writer.not_applicable(scenario):
                    counts["left_out"] += len(scenario.spec.table_types)
                    continue
                for table_type in scenario.spec.table_types:
                    began = time.monotonic()
                    result = writer.write(scenario, table_type)
                    seconds.append(time.monotonic() - began)
                    kind = "written" if result.ok else "rejected" if result.rejected else "failed"
                    counts[kind] += 1
                    if kind == "failed":
                        say(f"{scenario.id} {table_type}: {result.failed_at}: {result.message}")
        finally:
            writer.close()
    wall = time.monotonic() - started
    sampler.stop()
    cpu = sum(sampler.cpu.values())
    return {
        "tables": len(seconds),
        **counts,
        "wall_s": wall,
        "first_table_s": seconds[0] if seconds else None,
        "mean_table_s": statistics.mean(seconds[1:]) if len(seconds) > 1 else None,
        "p95_table_s": p95(seconds[1:]) if len(seconds) > 1 else None,
        "cpu_s": cpu,
        "cpu_per_table_s": cpu / len(seconds) if seconds else None,
        "peak_rss_mb": sampler.peak / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", help="scenario globs (default: the whole catalog)")
    args = parser.parse_args()
    say(f"writing {args.scenarios or 'the whole catalog'} as Iceberg tables")
    figures = measure(args.scenarios)
    report(figures, {}, ROOT / "bench" / "iceberg-writer-results.json")


if __name__ == "__main__":
    main()
