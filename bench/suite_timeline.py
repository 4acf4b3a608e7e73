"""A pytest plugin for `bench_suite.py`: one JSON line per test item, with its wall time, the
CPU seconds the whole machine spent meanwhile and its outcome.

The machine's CPU (from `/proc/stat`, every process) stands for the suite's: the suite's runs
start engines in processes of their own, which the pytest process's own clock does not see.
Loaded with `-p suite_timeline` (the bench puts this folder on PYTHONPATH); it writes to the
file named by `LAKECOMPAT_SUITE_TIMELINE` and does nothing without it.

With the suite in two lanes (`make test` runs pytest-xdist), items of both lanes run at the
same time: an item's machine CPU includes the other lane's, so per-item CPU and idle figures
say what the machine did meanwhile, not what the item cost.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

#: The file the lines go to (set by `bench_suite.py`).
OUT_VARIABLE = "LAKECOMPAT_SUITE_TIMELINE"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def machine_busy_s() -> float:
    """CPU seconds every core of the machine has spent busy since boot (idle and I/O wait
    left out)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    ticks = [int(field) for field in fields]
    return (sum(ticks) - ticks[3] - ticks[4]) / _TICKS


class _Item:
    """What is known of one item while it runs: its start, and the worst of its phases."""

    def __init__(self) -> None:
        self.started = time.time()
        self.busy = machine_busy_s()
        self.outcome = "passed"


_running: dict[str, _Item] = {}


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _running[nodeid] = _Item()


def pytest_runtest_logreport(report: Any) -> None:
    item = _running.get(report.nodeid)
    if item is None:
        return
    if report.failed:
        item.outcome = "failed" if report.when == "call" else "error"
    elif report.skipped and item.outcome == "passed":
        item.outcome = "skipped"


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    item = _running.pop(nodeid, None)
    out = os.environ.get(OUT_VARIABLE)
    # Under pytest-xdist the lanes' workers report each item to the main process, which
    # writes its line; a worker writing too would count it twice.
    if item is None or not out or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    line = {
        "id": nodeid,
        "started": round(item.started, 3),
        "wall_s": round(time.time() - item.started, 3),
        "machine_cpu_s": round(machine_busy_s() - item.busy, 2),
        "outcome": item.outcome,
    }
    with open(out, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")
