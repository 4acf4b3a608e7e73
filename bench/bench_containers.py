"""Benchmark: engines in containers (`lakecompat run --containers`) next to local processes.

Run with `.venv/bin/python bench/bench_containers.py`. Prints a table and writes
`bench/containers-results.json`. It measures, in order:

- the images: the Debian base image (debootstrap and import), each JDK image and the Python
  images (the run's Python alone, for the Python readers, and with Spark's JDK), built cold
  (`--cold`: the project's images are removed first; about two minutes) and cached (the time
  to find them again);
- the same run (`--scenarios`, `--engines`; Hudi copy-on-write tables, each engine's default
  variant) as local processes and in containers: wall time and the CPU seconds of the whole
  machine while it ran (a container's processes are not the run's children, so the run's own
  accounting would miss them; run it on an otherwise quiet machine), per cell, and whether
  the two runs' cells have the same outcomes.

The table cache is warm for both runs (a first run writes the tables), so the difference is the
engines' side: starting them in containers and reading through them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lakecompat.engines.infra.containers import images
from lakecompat.engines.infra.containers.runtime import LABEL, connect
from lakecompat.engines.infra.jdk import find_jdk, installed_jdks
from lakecompat.engines.spark.runtime import SPARK_JAVA_VERSIONS
from lakecompat.harness.results.store import load_run

SCRIPT = Path(sys.executable).parent / "lakecompat"
CLOCK = os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """User and system CPU seconds of the whole machine since it started (/proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system = (int(v) for v in fields[:3])
    return (user + nice + system) / CLOCK


def image_times(cold: bool, log_dir: Path) -> dict[str, float]:
    """Seconds to build (cold) or find (cached) the base image and each JDK's image."""
    runtime = connect(log_dir)
    if cold:
        for image in runtime.client.images.list(filters={"label": LABEL}):
            runtime.client.images.remove(image.id, force=True)
    found: dict[str, float] = {}
    started = time.monotonic()
    images.base_image(runtime)
    found["base"] = time.monotonic() - started
    for jdk in installed_jdks():
        started = time.monotonic()
        images.jdk_image(runtime, jdk.home)
        found[f"jdk{jdk.major}"] = time.monotonic() - started
    started = time.monotonic()
    images.python_image(runtime)
    found["python"] = time.monotonic() - started
    spark = find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5")
    started = time.monotonic()
    images.python_image(runtime, spark.home)
    found[f"jdk{spark.major}-python"] = time.monotonic() - started
    return found


def timed_run(args: argparse.Namespace, containers: bool, reports: Path) -> dict[str, object]:
    """One run of the benchmark's selection: wall and machine CPU seconds, and its cells."""
    argv = [str(SCRIPT), "run", "--scenarios", args.scenarios, "--engines", args.engines]
    argv += ["--formats", "hudi", "--table-types", "cow", "--variants", "default"]
    argv += ["--reports", str(reports), "--quiet"]
    if containers:
        argv.append("--containers")
    cpu, started = machine_cpu_seconds(), time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall, cpu = time.monotonic() - started, machine_cpu_seconds() - cpu
    if done.returncode not in (0, 1):
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    run_dir = next((reports / "runs").iterdir())
    _info, cells = load_run(run_dir)
    return {
        "wall_s": round(wall, 1),
        "machine_cpu_s": round(cpu, 1),
        "cells": len(cells),
        "cpu_s_per_cell": round(cpu / max(len(cells), 1), 3),
        "outcomes": {"|".join(c.key): str(c.outcome) for c in cells},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", action="store_true", help="remove the images first")
    parser.add_argument("--scenarios", default="rename_column/*,add_column/*")
    parser.add_argument("--engines", default="hive,trino,spark,hudi-rs")
    parser.add_argument("--images-only", action="store_true", help="time the images only, no runs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "containers-results.json")
    args = parser.parse_args()
    os.environ["LAKECOMPAT_CONTAINERS"] = "1"
    with tempfile.TemporaryDirectory(prefix="lakecompat-bench-") as scratch:
        work = Path(scratch)
        results: dict[str, object] = {"images_cold" if args.cold else "images_cached": {}}
        results[next(iter(results))] = {
            k: round(v, 1) for k, v in image_times(args.cold, work / "logs").items()
        }
        if args.cold:
            results["images_cached"] = {
                k: round(v, 1) for k, v in image_times(False, work / "logs").items()
            }
        del os.environ["LAKECOMPAT_CONTAINERS"]
        if args.images_only:
            _report(results, args.out)
            return
        timed_run(args, False, work / "warm-up")  # the tables into the cache
        process = timed_run(args, False, work / "process")
        container = timed_run(args, True, work / "container")
    differing = sorted(
        key
        for key in process["outcomes"].keys() | container["outcomes"].keys()  # type: ignore[union-attr]
        if process["outcomes"].get(key) != container["outcomes"].get(key)  # type: ignore[union-attr]
    )
    results["selection"] = {"scenarios": args.scenarios, "engines": args.engines}
    for name, run in (("process", process), ("container", container)):
        run.pop("outcomes")
        results[name] = run
    results["cells_with_other_outcomes"] = differing
    _report(results, args.out)


def _report(results: dict[str, object], out: Path) -> None:
    for key, value in results.items():
        print(f"{key:28} {json.dumps(value)}")
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
