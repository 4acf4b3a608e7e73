"""Benchmark: the test suite's wall time, its CPU, and where both go.

Runs the README's test command as CI does, `CI=true bash .ci/run` with no input, in a fresh
clone of this repository's last commit (a new `.venv`; the caches on disk as CI keeps them),
or with `--here` as `make test` in this folder. Prints:

- the wall time of the whole command (target: 25 minutes) and of the tests themselves;
- the CPU seconds of the command's process tree (user and system), and how many of the
  machine's cores that kept busy on average;
- the tests that passed, failed or were skipped;
- per lane (`make test` runs two side by side, see tests/conftest.py): when it started and
  ended, and its tests' summed wall time, which says whether the lanes are balanced;
- per test module and for the slowest test items: wall time, the machine's CPU seconds
  meanwhile (every process: the tests' runs start engines of their own) and the core-seconds
  left idle (the machine's cores times the wall time, less that CPU). With the lanes side by
  side, an item's CPU includes the other lane's: those figures say what the machine did
  meanwhile, not what the item cost (`--pytest-args "-n 0 ..."` measures a part alone).

Writes `bench/suite-results.json`, with the machine's speed before and after
(`machine_reference_cpu_s`, `jvm_reference_cpu_s`: see `bench_run.py`), since the same suite
takes 10 to 25 % longer in one hour than in another on this machine. A comparison of two
commits needs runs of both, alternating.

    .venv/bin/python bench/bench_suite.py [--here] [--keep] [--pytest-args "ARGS"]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_run import machine_references, say
from suite_timeline import OUT_VARIABLE, machine_busy_s

sys.path.insert(0, str(ROOT / "tests"))
from conftest import lane_of

TARGET_MIN = 25.0
#: Items and modules listed by name.
LISTED = 25


def commit_of(folder: Path) -> str:
    """The commit checked out in `folder`."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=folder, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def uncommitted(folder: Path) -> bool:
    """Whether `folder` has changes a clone would not have."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    return bool(done.stdout.strip())


def run_suite(folder: Path, pytest_args: str, timeline: Path) -> dict[str, Any]:
    """Run the suite in `folder`, its items recorded to `timeline`; the command's figures."""
    command = ["make", "test", f"ARGS={pytest_args}"] if pytest_args else ["bash", ".ci/run"]
    env = {
        **os.environ,
        "CI": "true",
        OUT_VARIABLE: str(timeline),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(folder / "bench"), os.environ.get("PYTHONPATH", "")) if p
        ),
        "PYTEST_ADDOPTS": f"-p suite_timeline {os.environ.get('PYTEST_ADDOPTS', '')}".strip(),
    }
    say(f"{shlex.join(command)} in {folder}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = machine_busy_s()
    started = time.monotonic()
    done = subprocess.run(command, cwd=folder, env=env, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {
        "command": shlex.join(command),
        "exit_code": done.returncode,
        "wall_s": round(wall, 1),
        "wall_min": round(wall / 60, 2),
        "cpu_user_s": round(user, 1),
        "cpu_system_s": round(system, 1),
        "busy_cores": round((user + system) / wall, 2),
        "machine_cpu_s": round(machine_busy_s() - busy, 1),
    }


def summarise(lines: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    """Outcome counts; when each lane started and ended (seconds after the first item) and its
    items' summed wall time; wall time, CPU and idle core-seconds per module and item."""
    counts: dict[str, int] = defaultdict(int)
    modules: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    lanes: dict[str, dict[str, float]] = {}
    first = min((line["started"] for line in lines), default=0.0)
    for line in lines:
        counts[line["outcome"]] += 1
        start = line["started"] - first
        end = start + line["wall_s"]
        lane = lanes.setdefault(lane_of(line["id"]), {"start_s": start, "end_s": end, "sum_s": 0})
        lane["start_s"], lane["end_s"] = min(lane["start_s"], start), max(lane["end_s"], end)
        lane["sum_s"] += line["wall_s"]
        module = modules[line["id"].split("::", 1)[0]]
        module["items"] += 1
        module["wall_s"] += line["wall_s"]
        module["machine_cpu_s"] += line["machine_cpu_s"]

    def idle(wall: float, cpu: float) -> float:
        return round(max(0.0, cores * wall - cpu), 1)

    by_module = [
        {
            "module": name,
            "items": int(figures["items"]),
            "wall_s": round(figures["wall_s"], 1),
            "machine_cpu_s": round(figures["machine_cpu_s"], 1),
            "idle_core_s": idle(figures["wall_s"], figures["machine_cpu_s"]),
        }
        for name, figures in sorted(modules.items(), key=lambda kv: -kv[1]["wall_s"])
    ]
    items = [{**line, "idle_core_s": idle(line["wall_s"], line["machine_cpu_s"])} for line in lines]
    return {
        "tests": len(lines),
        **{f"tests_{outcome}": counts[outcome] for outcome in sorted(counts)},
        "tests_wall_s": round(max((lane["end_s"] for lane in lanes.values()), default=0.0), 1),
        "lanes": [
            {"lane": name, **{key: round(value, 1) for key, value in figures.items()}}
            for name, figures in sorted(lanes.items())
        ],
        "modules": by_module,
        "slowest": sorted(items, key=lambda i: -i["wall_s"])[:LISTED],
        "most_idle": sorted(items, key=lambda i: -i["idle_core_s"])[:LISTED],
    }


def show(figures: dict[str, Any], whole: bool) -> None:
    """Print the figures: the scalars one per line (the wall time against the target when
    `whole` suite ran), then the tables."""
    for name, value in figures.items():
        if isinstance(value, list):
            continue
        verdict = ""
        if name == "wall_min" and whole:
            verdict = f"target ≤ {TARGET_MIN:g}: {'met' if value <= TARGET_MIN else 'MISSED'}"
        print(f"{name:<28} {value!s:>12}  {verdict}")
    print("\nper lane: started s, ended s, its tests' wall s summed")
    for row in figures.get("lanes", []):
        print(f"  {row['start_s']:8.1f} {row['end_s']:8.1f} {row['sum_s']:8.1f}  {row['lane']}")
    print("\nper module: wall s, machine CPU s (both lanes), idle core-s, items")
    for row in figures["modules"][:LISTED]:
        print(
            f"  {row['wall_s']:8.1f} {row['machine_cpu_s']:8.1f} {row['idle_core_s']:8.1f}"
            f" {row['items']:5d}  {row['module']}"
        )
    for title, key in (("slowest items", "slowest"), ("items leaving a core idle", "most_idle")):
        print(f"\n{title}: wall s, machine CPU s, idle core-s")
        for row in figures[key]:
            print(
                f"  {row['wall_s']:8.1f} {row['machine_cpu_s']:8.1f} {row['idle_core_s']:8.1f}"
                f"  {row['id']}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--here", action="store_true", help="run `make test` in this folder, not in a fresh clone"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the fresh clone (about 700 MB with its .venv)"
    )
    parser.add_argument(
        "--pytest-args",
        default="",
        help='pytest arguments for part of the suite, as `make test ARGS="..."` takes them',
    )
    args = parser.parse_args()
    if not args.here and uncommitted(ROOT):
        say("the working tree has uncommitted changes: the fresh clone has the last commit only")
    figures: dict[str, Any] = {"commit": commit_of(ROOT), "where": "here"}
    figures.update(machine_references())
    scratch = Path(tempfile.mkdtemp(prefix="lakecompat-suite-"))
    try:
        folder = ROOT
        if not args.here:
            folder = scratch / "lakecompat"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
            figures["where"] = f"a fresh clone ({folder})"
        timeline = scratch / "timeline.jsonl"
        figures.update(run_suite(folder, args.pytest_args, timeline))
        lines = []
        if timeline.exists():
            lines = [json.loads(line) for line in timeline.read_text().splitlines() if line]
        figures.update(summarise(lines, os.cpu_count() or 1))
    finally:
        if args.keep and not args.here:
            say(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    figures.update(machine_references("after"))
    show(figures, whole=not args.pytest_args)
    out = ROOT / "bench" / "suite-results.json"
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwritten to {out}")
    return 0 if figures["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
