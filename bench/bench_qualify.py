"""Benchmark: what a second version point costs (`lakecompat qualify`).

Runs every point of a versions file (default: Hudi 1.1.1 and 1.2.0, all readers, the full
default matrix) the way `lakecompat qualify` does, and prints the wall time of one point (the
candidate's own run; when the candidate shared a run with other points, an ordinary run of it
alone, measured afterwards), of all points together (provisioning included) and their ratio
(the target is at most 1.6), with the qualification's counts. Writes
`bench/qualify-results.json` (for another versions file, `bench/qualify-results-<file>.json`).

    .venv/bin/python bench/bench_qualify.py [VERSIONS_FILE] [--scenarios GLOBS]
    .venv/bin/python bench/bench_qualify.py versions/readers-lag-writer-1.2.yaml
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_run import report

from lakecompat.harness.qualify.compare import counts_line
from lakecompat.harness.qualify.run import compare_runs, point_options, run_points
from lakecompat.harness.qualify.versions import load_versions
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

#: The issue's target: a second point must cost less than a second full run.
RATIO_TARGET = 1.6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "versions",
        nargs="?",
        type=Path,
        default=ROOT / "versions" / "hudi-1.1-to-1.2.yaml",
        help="versions file (default: versions/hudi-1.1-to-1.2.yaml)",
    )
    parser.add_argument("--scenarios", help="scenario glob(s), as for `lakecompat run`")
    args = parser.parse_args()
    plan = load_versions(args.versions)
    with tempfile.TemporaryDirectory() as reports:
        options = RunOptions(
            scenarios_dir=ROOT / "scenarios",
            pattern=args.scenarios,
            formats=("hudi",),  # qualify's points set Hudi releases
            reports_dir=Path(reports),
            expectations_dir=ROOT / "expectations",
            table_cache=None,  # every table written, as the figures always were
        )
        started = time.monotonic()
        runs = run_points(plan, options, quiet=True)
        total = time.monotonic() - started
        base, cand = plan.baseline_point(), plan.candidate_point()
        result = compare_runs(runs[base.name].run_dir, runs[cand.name].run_dir)
        one = runs[cand.name].seconds
        if runs[cand.name].shared_with:  # its run measured other points too: run it alone
            started = time.monotonic()
            Runner(point_options(options, cand), Progress(quiet=True)).run()
            one = time.monotonic() - started
    figures = {
        "versions": args.versions.name,
        "scenarios": args.scenarios or "the full default matrix",
        "points": len(plan.points),
        "shared_runs": sorted(
            {tuple(sorted([n, *r.shared_with])) for n, r in runs.items() if r.shared_with}
        ),
        "cells_per_point": len(result.rows),
        **{f"point_{name}_s": run.seconds for name, run in runs.items()},
        "one_point_s": one,
        "all_points_s": total,
        "ratio": total / one,
        "qualification": counts_line(result),
    }
    default = args.versions.name == "hudi-1.1-to-1.2.yaml"
    out = "qualify-results.json" if default else f"qualify-results-{args.versions.stem}.json"
    report(figures, {"ratio": RATIO_TARGET}, ROOT / "bench" / out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
