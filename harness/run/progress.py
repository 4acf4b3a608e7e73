"""Progress on the terminal: a bar on a terminal, one line per cell otherwise (CI logs)."""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from tqdm import tqdm

from harness.results.outcomes import Cell, Outcome


class Progress:
    """Reports stages and cells to stderr; `quiet=True` reports nothing.

    The runner reports from two threads (the writer's and the readers'); a lock keeps lines
    whole.
    """

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.interactive = self.stream.isatty()
        self._bar: tqdm | None = None
        self._total = 0
        self._done = 0
        self._lock = threading.RLock()

    def stage(self, text: str) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.set_postfix_str(text, refresh=True)
            else:
                self.note(text)

    def note(self, text: str) -> None:
        if not self.quiet:
            with self._lock:
                tqdm.write(text, file=self.stream)

    def begin(self, total: int) -> None:
        self._total, self._done = total, 0
        if self.interactive and not self.quiet:
            self._bar = tqdm(total=total, unit="cell", file=self.stream, dynamic_ncols=True)

    def cell(self, cell: Cell) -> None:
        where = f"{cell.scenario} · {cell.engine} {cell.table_type} {cell.query_type}"
        line = f"{cell.outcome.value:<13} {where} [{cell.variant}]"
        if cell.outcome is not Outcome.PASS:
            line += f": {cell.reason}"
        with self._lock:
            self._done += 1
            if self._bar is not None:
                if cell.outcome is not Outcome.PASS:
                    self.note(line)
                self._bar.update(1)
            else:
                self.note(f"[{self._done}/{self._total}] {line}")

    def end(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
