"""Benchmark: the Flink reader, which runs on request at Hudi 0.15.0 (not in the default matrix).

Run with `.venv/bin/python bench/bench_flink.py`. Prints a table and writes
`bench/flink-results.json`. It measures:

- provisioning Flink into an empty cache (Flink's jars from PyPI, Hudi's and Hadoop's from
  Maven; `--skip-cold` leaves it out) and from the warm one;
- Flink's start in a fresh process (the JVM, its mini-cluster and a first query);
- a matrix at Hudi 0.15.0 read by Flink alone (the whole catalog unless `--scenarios`): wall
  time, cells, the mean and 95th percentile of Flink's query time, the CPU seconds of the
  Flink and Spark processes, and the peak memory.
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

from bench_run import LIBRARY_START, ProcessSampler, p95, report, say, timed_child

from lakecompat.engines.releases import Releases
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

PROVISION = (
    "import time; from lakecompat.engines.flink.runtime import provision; t = time.monotonic(); "
    "provision(progress=lambda m: None); print(time.monotonic() - t)"
)
HUDI = "0.15.0"


def measure(args: argparse.Namespace) -> dict[str, float | int | None]:
    figures: dict[str, float | int | None] = {"provision_cold_s": None}
    if not args.skip_cold:
        say("provisioning Flink into an empty cache (pip and mvn download everything)")
        with tempfile.TemporaryDirectory() as empty_cache:
            env = {"LAKECOMPAT_CACHE": empty_cache}
            (figures["provision_cold_s"],) = timed_child(PROVISION, env)
    say("provisioning from the warm cache, then Flink's start")
    (figures["provision_warm_s"],) = timed_child(PROVISION)
    (figures["flink_start_s"],) = timed_child(LIBRARY_START.format(name="flink"))
    say(f"Hudi {HUDI} tables read by Flink ({args.scenarios or 'the whole catalog'})")
    sampler = ProcessSampler()
    sampler.start()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        options = RunOptions(
            pattern=args.scenarios,
            engines=("flink",),
            releases=Releases({"hudi": HUDI}),
            reports_dir=args.reports or Path(scratch),
            expectations_dir=ROOT / "expectations",
            table_cache=None,  # every table written, as the figures always were
        )
        result = Runner(options, Progress(quiet=True)).run()
    wall = time.monotonic() - started
    sampler.stop()
    times = [c.seconds for c in result.cells if c.seconds > 0]
    figures.update(
        matrix_wall_s=wall,
        cells=len(result.cells),
        tables=len({(c.scenario, c.table_type) for c in result.cells}),
        flink_queries=len(times),
        flink_query_mean_s=statistics.mean(times),
        flink_query_p95_s=p95(times),
        peak_memory_mib=round(sampler.peak / 2**20),
        regressions=sum(j.verdict.value == "regression" for j in result.judged),
    )
    for label, seconds in sorted(sampler.cpu.items()):
        figures[f"cpu_{label}_s"] = seconds
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--scenarios", help="scenario glob(s), as for `lakecompat run`")
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold download")
    parser.add_argument(
        "--reports", type=Path, help="keep the run folder here (default: a temporary folder)"
    )
    args = parser.parse_args()
    report(measure(args), {}, ROOT / "bench" / "flink-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
