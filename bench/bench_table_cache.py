"""Benchmark: what the table cache saves, and the CPU a cell costs.

Runs the full default matrix (or `--scenarios`) twice into an empty table cache of its own:
cold (every table written, then kept) and warm (every table read from the cache), and prints
the wall time of each, their ratio (target: warm at most 40 % of cold; cold at most 600 s),
the CPU seconds of each engine's processes, CPU seconds per cell, per write step (Spark's
CPU in the cold run less that in the warm one, over the write steps) and per query of each
engine (its processes' CPU in the warm run over its queries). It checks that both runs gave
the same cells. With `--qualify`, it then runs a qualification of two points with the same
writer (`--point`s below; the second point's HiveServer2 reads with the Hudi 0.15.0 jars)
against the warm cache, and prints what the second point cost against one point (target: at
most 0.3 of one cold point). Writes `bench/table-cache-results.json`,
with the machine's speed before and after (`machine_reference_cpu_s`: the CPU seconds of a
fixed Python loop; `jvm_reference_cpu_s`: those of a fixed JVM workload), since figures of
different days differ with it.

    .venv/bin/python bench/bench_table_cache.py [--scenarios GLOBS] [--formats hudi,iceberg]
        [--qualify] [--keep DIR]

With `--formats`, the matrix of those table formats with each format's default readers; the
figures then go to `bench/table-cache-results-<formats>.json`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_run import ProcessSampler, machine_references, report, say

from lakecompat.harness.qualify.run import run_points
from lakecompat.harness.qualify.versions import VersionPlan, VersionPoint
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.run.options import RunOptions, default_engines
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

TARGETS = {"cold_wall_s": 600.0, "warm_ratio": 0.4, "second_point_ratio": 0.3}
#: Which processes serve which engine's queries (the Metastore serves Hive and Trino both).
QUERY_PROCESSES = {
    "spark": "spark",
    "hive": "hiveserver2",
    "trino": "trino",
    "hudi-rs": "hudi-rs",
    "daft": "daft",
    "pyiceberg": "pyiceberg",
    "polars": "polars",
    "deltalake": "deltalake",
    "duckdb": "duckdb",
}


def measured_run(options: RunOptions) -> tuple[float, list[Cell], dict[str, float], float, int]:
    """(wall seconds, cells, CPU seconds per process label, sampled seconds, write steps)."""
    sampler = ProcessSampler()
    sampler.start()
    started = time.monotonic()
    result = Runner(options, Progress(quiet=True)).run()
    wall = time.monotonic() - started
    sampler.stop()
    return wall, result.cells, sampler.cpu, sampler.seconds, len(result.write_seconds)


def differing_cells(first: list[Cell], second: list[Cell]) -> list[str]:
    """The cells whose outcome or reason differs between two runs of the same matrix: key,
    then each run's outcome and reason."""
    other = {c.key: (c.outcome.value, c.reason) for c in second}
    return [
        f"{c.key}: {(c.outcome.value, c.reason)} against {other.get(c.key)}"
        for c in first
        if other.get(c.key) != (c.outcome.value, c.reason)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", help="scenario glob(s), as for `lakecompat run`")
    parser.add_argument(
        "--formats", default="hudi", help="comma-separated table formats (default: hudi)"
    )
    parser.add_argument(
        "--qualify", action="store_true", help="also measure a second version point"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep both runs' folders in this folder (default: deleted with the table cache)",
    )
    args = parser.parse_args()
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    figures: dict[str, object] = {
        "scenarios": args.scenarios or "the full default matrix",
        "formats": list(formats),
        # The machine's speed before and after (see `machine_references`).
        **machine_references(),
    }
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "table-cache"
        options = RunOptions(
            pattern=args.scenarios,
            formats=formats,
            engines=default_engines(formats),
            reports_dir=args.keep or Path(scratch) / "reports",
            expectations_dir=ROOT / "expectations",
            table_cache=cache,
        )
        say("cold: every table written into an empty table cache")
        cold_s, cold, cold_cpu, cold_sampled, steps = measured_run(options)
        say("warm: every table read from the cache")
        warm_s, warm, warm_cpu, warm_sampled, _ = measured_run(options)
        differing = differing_cells(cold, warm)
        for line in differing[:20]:
            say(f"differs between the cold and the warm run: {line}")
        figures.update(
            cells=len(cold),
            cells_differing=len(differing),
            differing=differing[:20],
            warm_cells_from_cache=sum(c.table_from == "cache" for c in warm),
            cold_wall_s=cold_s,
            warm_wall_s=warm_s,
            warm_ratio=warm_s / cold_s,
            write_steps=steps,
        )
        for name, cpu in (("cold", cold_cpu), ("warm", warm_cpu)):
            for label, seconds in sorted(cpu.items()):
                figures[f"{name}_cpu_{label}_s"] = round(seconds, 1)
            total = sum(cpu.values())
            figures[f"{name}_cpu_s"] = round(total, 1)
            figures[f"{name}_cpu_per_cell_s"] = total / len(cold)
        figures["cold_busy_cores"] = sum(cold_cpu.values()) / cold_sampled
        figures["warm_busy_cores"] = sum(warm_cpu.values()) / warm_sampled
        writing = cold_cpu.get("spark", 0.0) - warm_cpu.get("spark", 0.0)
        figures["cpu_per_write_step_s"] = writing / steps if steps else None
        for engine, label in QUERY_PROCESSES.items():
            queries = sum(1 for c in warm if c.engine == engine and c.seconds > 0)
            if queries:
                figures[f"{engine}_queries"] = queries
                figures[f"cpu_per_{engine}_query_s"] = warm_cpu.get(label, 0.0) / queries
        if args.qualify:
            say("a qualification of two points with the same writer, tables cached")
            plan = VersionPlan(
                points=[
                    VersionPoint(name="all-1.2.0", hudi="1.2.0"),
                    VersionPoint(name="hive-reads-0.15.0", hudi="1.2.0", hive_hudi="0.15.0"),
                ]
            )
            started = time.monotonic()
            run_points(plan, options, quiet=True)
            both = time.monotonic() - started
            figures.update(
                qualify_two_points_s=both,
                second_point_s=both - warm_s,
                second_point_ratio=(both - warm_s) / cold_s,
            )
    figures.update(machine_references("after"))
    name = (
        "table-cache-results.json"
        if formats == ("hudi",)
        else (f"table-cache-results-{'-'.join(formats)}.json")
    )
    report(figures, TARGETS, ROOT / "bench" / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
