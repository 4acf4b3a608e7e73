"""Benchmark: the full matrix whole, and in 2 and in 4 shards (`--shard K/N`), merged.

Runs the matrix once unsharded, then its shards one after the other on this machine, each
shard a run of its own with its own engine starts, the way N CI runners would run them at the
same time, balanced by the unsharded run's `costs.json`. For every N it prints each shard's
wall time, the critical path of a sharded CI run (the slowest shard plus the merge), and the
imbalance (slowest shard / fastest shard - 1; the target is at most 15 %), and checks that the
merged run has the unsharded run's cells. Writes `bench/shards-results.json`, and the
unsharded run's costs to `bench/table-costs.json` (what `--shard-costs` and the CI example
read).

    .venv/bin/python bench/bench_shards.py [--scenarios GLOBS] [--shards 2,4]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_run import report

from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.merge import merge
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner
from lakecompat.harness.run.shards import COSTS_FILE, Shard

#: The issue's target: N shards finish within 15 % of each other.
IMBALANCE_TARGET = 0.15


def timed(options: RunOptions) -> tuple[float, Path]:
    """Seconds a run took (engine starts included), and its run folder."""
    started = time.monotonic()
    result = Runner(options, Progress(quiet=True)).run()
    return time.monotonic() - started, result.run_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", help="scenario glob(s), as for `lakecompat run`")
    parser.add_argument("--shards", default="2,4", help="shard counts (default: %(default)s)")
    args = parser.parse_args()
    counts = [int(n) for n in args.shards.split(",")]
    figures: dict[str, object] = {"scenarios": args.scenarios or "the full default matrix"}
    with tempfile.TemporaryDirectory() as scratch:
        base = RunOptions(
            scenarios_dir=ROOT / "scenarios",
            pattern=args.scenarios,
            expectations_dir=ROOT / "expectations",
            reports_dir=Path(scratch) / "whole",
            table_cache=None,  # every table written, as the figures always were
        )
        print("the matrix, unsharded", flush=True)
        whole_s, whole_dir = timed(base)
        costs = whole_dir / COSTS_FILE
        if not args.scenarios:
            shutil.copyfile(costs, ROOT / "bench" / "table-costs.json")
        figures["shards_1_s"] = whole_s
        _, whole_cells = load_run(whole_dir)
        for count in counts:
            seconds, folders = [], []
            for index in range(1, count + 1):
                print(f"shard {index}/{count}", flush=True)
                options = replace(
                    base,
                    reports_dir=Path(scratch) / f"n{count}-{index}",
                    shard=Shard(index, count),
                    shard_costs=costs,
                )
                took, folder = timed(options)
                seconds.append(took)
                folders.append(folder)
            started = time.monotonic()
            merged_dir, _ = merge(folders, Path(scratch) / f"n{count}-merged", ROOT / "scenarios")
            merge_s = time.monotonic() - started
            _, merged_cells = load_run(merged_dir)
            same = [(c.key, c.outcome) for c in merged_cells] == [
                (c.key, c.outcome) for c in whole_cells
            ]
            figures[f"shards_{count}_each_s"] = [round(s, 1) for s in seconds]
            figures[f"shards_{count}_merge_s"] = merge_s
            figures[f"shards_{count}_critical_path_s"] = max(seconds) + merge_s
            figures[f"shards_{count}_imbalance"] = max(seconds) / min(seconds) - 1
            figures[f"shards_{count}_speedup"] = whole_s / (max(seconds) + merge_s)
            figures[f"shards_{count}_cells_equal_unsharded"] = same
    targets = {f"shards_{n}_imbalance": IMBALANCE_TARGET for n in counts}
    report(figures, targets, ROOT / "bench" / "shards-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
