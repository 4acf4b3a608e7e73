"""Progress on the terminal: a bar on a terminal, a line every 100 cells otherwise (CI logs).

Either way a cell that fails to read (WRONG, ERROR, ENGINE_FAILED) gets a line of its own with
its reason; a change the writer refused gets one line for its table, not one per reader cell;
PASS and UNSUPPORTED cells are only counted.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TextIO

from tqdm import tqdm

from harness.results.outcomes import Cell, Outcome, summary_line

#: Cells between two count lines when not on a terminal.
EVERY = 100
#: The bar's width on a terminal that reports none (0 columns, as `script` and some CI
#: terminals do), where a bar sized to the terminal is squeezed to one block, its counts cut.
FALLBACK_COLUMNS = 80


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
        self._cells: list[Cell] = []
        #: Tables whose refusal by the writer was reported already.
        self._refused: set[tuple[str, str, str]] = set()

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
            width = _unsized_width(self.stream)
            self._bar = tqdm(
                total=total,
                unit="cell",
                file=self.stream,
                dynamic_ncols=width is None,
                ncols=width,
            )

    def cell(self, cell: Cell) -> None:
        """Count a cell; report it when it failed to read, or when the writer refused its
        table's change and this is the table's first cell."""
        with self._lock:
            self._done += 1
            self._cells.append(cell)
            line = self._line(cell)
            if self._bar is not None:
                if line:
                    self.note(line)
                self._bar.update(1)
                return
            if line:
                self.note(f"[{self._done}/{self._total}] {line}")
            if self._done % EVERY == 0 or self._done == self._total:
                self.note(f"[{self._done}/{self._total}] so far: {summary_line(self._cells)}")

    def _line(self, cell: Cell) -> str:
        """What to say of one cell ("" for nothing)."""
        if cell.outcome in (Outcome.PASS, Outcome.UNSUPPORTED):
            return ""
        kind = cell.table_kind
        if cell.outcome is Outcome.REJECTED:
            table = (cell.scenario, cell.format, cell.table_type)
            if table in self._refused:
                return ""
            self._refused.add(table)
            return f"REJECTED      {cell.scenario} ({kind}): {cell.reason}"
        query = cell.query_type if cell.shape == "all" else f"{cell.query_type} {cell.shape}"
        where = f"{cell.scenario} · {cell.engine} {kind} {query}"
        return f"{cell.outcome.value:<13} {where} [{cell.variant}]: {cell.reason}"

    def end(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _unsized_width(stream: TextIO) -> int | None:
    """`FALLBACK_COLUMNS` for a terminal that reports 0 columns; None (the bar follows the
    terminal's width) otherwise."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None
    return FALLBACK_COLUMNS if columns == 0 else None
