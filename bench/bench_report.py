"""Benchmark: what the reports of a run weigh, and what they would weigh for a catalog five
times larger.

Renders every report of a finished run (default: the newest under reports/runs/) into a
scratch folder and prints each file's size and the rendering time; then does the same for a
run five times as large, made from the same cells with every scenario copied four more times
under other names (evidence included, so the page's shared strings grow as a real catalog's
would). Writes `bench/report-results.json`.

    .venv/bin/python bench/bench_report.py [RUN_DIR] [--times 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lakecompat.harness.report.render import REPORT_FILES, write_reports
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import ResultsWriter, load_run, write_run_info


def newest_run() -> Path:
    """The newest run folder under reports/runs/."""
    runs = sorted((ROOT / "reports" / "runs").glob("*/results.jsonl"))
    if not runs:
        sys.exit("no run under reports/runs/: run `make matrix` first, or name a run folder")
    return runs[-1].parent


def renamed(cell: Cell, copy: int) -> Cell:
    """The cell of copy `copy` of its scenario (a scenario of its own, evidence renamed too)."""
    if copy == 0:
        return cell
    suffix = f"_copy{copy}"
    name = cell.scenario.replace("/", "_")

    def text(value: str | None) -> str | None:
        return value.replace(name, name + suffix) if value else value

    evidence = dataclasses.replace(
        cell.evidence, sql=text(cell.evidence.sql), error=text(cell.evidence.error)
    )
    return dataclasses.replace(cell, scenario=cell.scenario + suffix, evidence=evidence)


def measure(run_dir: Path, out: Path) -> dict[str, object]:
    """Render the reports of `run_dir` into `out`: the seconds it took and each file's bytes."""
    started = time.perf_counter()
    judged = write_reports(run_dir, [out])
    seconds = time.perf_counter() - started
    sizes = {name: (out / name).stat().st_size for name in REPORT_FILES}
    return {"cells": len(judged), "render_seconds": round(seconds, 2), "bytes": sizes}


def larger_run(run_dir: Path, folder: Path, times: int) -> Path:
    """A run folder with every scenario of `run_dir` `times` times."""
    info, cells = load_run(run_dir)
    folder.mkdir(parents=True)
    writer = ResultsWriter(folder)
    for copy in range(times):
        for cell in cells:
            writer.append(renamed(cell, copy))
    writer.close()
    write_run_info(folder, {**info, "run_id": f"{info.get('run_id', 'run')}-x{times}"})
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="a run folder (default: newest)")
    parser.add_argument("--times", type=int, default=5, help="how many times larger (default 5)")
    args = parser.parse_args()
    run_dir = args.run_dir or newest_run()
    results: dict[str, object] = {"run": run_dir.name}
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        results["run_reports"] = measure(run_dir, base / "reports")
        bigger = larger_run(run_dir, base / "larger", args.times)
        results[f"{args.times}x_reports"] = measure(bigger, base / "larger-reports")
    for key in ("run_reports", f"{args.times}x_reports"):
        figures = results[key]
        assert isinstance(figures, dict)
        sizes = ", ".join(f"{n} {b / 1e6:.2f} MB" for n, b in figures["bytes"].items())
        print(
            f"{key}: {figures['cells']} cells, rendered in {figures['render_seconds']} s: {sizes}"
        )
    (ROOT / "bench" / "report-results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
