"""Helpers shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

from harness.outcomes import Cell
from harness.progress import Progress


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
