"""Helpers shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.outcomes import Cell
from harness.progress import Progress
from harness.runner import Runner, RunOptions

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


class InterruptAfter(Progress):
    """A silent progress reporter that raises KeyboardInterrupt after `cells` cells."""

    def __init__(self, cells: int) -> None:
        super().__init__(quiet=True)
        self.left = cells

    def cell(self, cell: Cell) -> None:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt


def processes_mentioning(text: str) -> list[int]:
    """PIDs of live (not zombie) processes whose command line contains `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def interrupted_run(reports: Path, engine: str, pattern: str, after: int) -> Path:
    """Run `pattern` (copy-on-write only) with one engine, Ctrl-C after `after` cells.

    Returns the run folder, after checking that the interrupt reached the caller.
    """
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=(engine,),
        table_types=("cow",),
        reports_dir=reports,
    )
    with pytest.raises(KeyboardInterrupt):
        Runner(options, InterruptAfter(after)).run()
    (run_dir,) = (reports / "runs").iterdir()
    return run_dir


def quiet_run(reports: Path, engines: tuple[str, ...], pattern: str) -> tuple[Path, list[Cell]]:
    """Run `pattern` with `engines` on both table types, silently: (run folder, cells)."""
    options = RunOptions(
        scenarios_dir=SCENARIOS, pattern=pattern, engines=engines, reports_dir=reports
    )
    result = Runner(options, Progress(quiet=True)).run()
    return result.run_dir, result.cells
