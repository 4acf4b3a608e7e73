"""Progress on the terminal: a bar on a terminal, a line every 100 cells otherwise (CI logs).

Each cell is judged against the known outcomes as it is measured. Either way a regression (a
cell that does not pass and is not known to fail so) and a known failure that now passes
(fixed upstream) get a line of their own, marked, the moment they are known; known failures
are counted (`verbose` lists them too); a change the writer refused gets one line for its
table, not one per reader cell; PASS and UNSUPPORTED cells are only counted. The counts are
on the bar, or on every count line.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TextIO

from tqdm import tqdm

from lakecompat.harness.report.summary import counted, known_failure, tally_line
from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.outcomes import Cell, Outcome, summary_line, table_of

#: Cells between two count lines when not on a terminal.
EVERY = 100
#: How a verdict's line starts, and its colour on a terminal (bold red, bold green).
MARKS = {
    Verdict.REGRESSION: ("REGRESSION", "\x1b[1;31m"),
    Verdict.FIXED_UPSTREAM: ("FIXED UPSTREAM", "\x1b[1;32m"),
    Verdict.AS_EXPECTED: ("known", ""),
}
#: The bar's width on a terminal that reports none (0 columns, as `script` and some CI
#: terminals do), where a bar sized to the terminal is squeezed to one block, its counts cut.
FALLBACK_COLUMNS = 80


class Progress:
    """Reports stages and cells to stderr; `quiet=True` reports nothing.

    The runner reports from two threads (the writer's and the readers'); a lock keeps lines
    whole.
    """

    def __init__(
        self, stream: TextIO | None = None, quiet: bool = False, verbose: bool = False
    ) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        #: List known failures as they are measured too (else they are counted).
        self.verbose = verbose
        self.interactive = self.stream.isatty()
        self._bar: tqdm | None = None
        self._total = 0
        self._done = 0
        self._lock = threading.RLock()
        self._cells: list[Cell] = []
        #: Regressions, cells fixed upstream and known failures so far (of judged cells).
        self._tally = {"regressions": 0, "fixed": 0, "known": 0}
        self._judging = False
        #: Tables whose refusal by the writer was reported already, and counted as a regression.
        self._refused: set[tuple[str, str, str]] = set()
        self._counted_refusals: set[tuple[str, str, str]] = set()

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

    def cell(self, cell: Cell, judged: Judged | None = None) -> None:
        """Count a cell (with its verdict, where the run judges it); report it when it is a
        regression or fixed upstream (any failure, unjudged), or when the writer refused its
        table's change and this is the table's first cell."""
        with self._lock:
            self._done += 1
            self._cells.append(cell)
            if judged is not None:
                self._count(judged)
            line = self._line(cell, judged)
            if self._bar is not None:
                if line:
                    self.note(line)
                if judged is not None:
                    self._bar.set_description_str(self._bar_tally(), refresh=False)
                self._bar.update(1)
                return
            if line:
                self.note(f"[{self._done}/{self._total}] {line}")
            if self._done % EVERY == 0 or self._done == self._total:
                counts = summary_line(self._cells)
                if self._judging:
                    counts += f" · {tally_line(**self._tally)}"
                self.note(f"[{self._done}/{self._total}] so far: {counts}")

    def _line(self, cell: Cell, judged: Judged | None) -> str:
        """What to say of one cell ("" for nothing)."""
        if judged is None:
            if cell.outcome in (Outcome.PASS, Outcome.UNSUPPORTED):
                return ""
        elif judged.verdict is Verdict.AS_EXPECTED and not (self.verbose and known_failure(judged)):
            return ""
        kind = cell.table_kind
        if cell.outcome is Outcome.REJECTED:
            table = (cell.scenario, cell.format, cell.table_type)
            if table in self._refused:
                return ""
            self._refused.add(table)
            return self._marked(judged, f"REJECTED      {cell.scenario} ({kind}): {cell.reason}")
        query = cell.query_type if cell.shape == "all" else f"{cell.query_type} {cell.shape}"
        where = f"{cell.scenario} · {cell.engine} {kind} {query}"
        text = f"{cell.outcome.value:<13} {where} [{cell.variant}]"
        if cell.reason:
            text += f": {cell.reason}"
        return self._marked(judged, text)

    def _marked(self, judged: Judged | None, text: str) -> str:
        """`text` after its verdict's mark (in colour on a terminal), with what was expected."""
        if judged is None:
            return text
        mark, colour = MARKS[judged.verdict]
        if judged.verdict is Verdict.REGRESSION:
            text += f" (expected {judged.expected.value})"
        elif judged.verdict is Verdict.FIXED_UPSTREAM and judged.known:
            text += f" (known {judged.known.outcome.value}: {judged.known.reason})"
        if colour and self.interactive:
            mark = f"{colour}{mark}\x1b[0m" + " " * (14 - len(mark))
        return f"{mark:<14} {text}"

    def _count(self, judged: Judged) -> None:
        """Count a verdict as `verdict_line` does: a refused table once, and a known refusal
        not as a known failure (the counts line says the refused tables)."""
        self._judging = True
        if judged.cell.outcome is Outcome.REJECTED:
            table = table_of(judged.cell)
            if judged.verdict is not Verdict.REGRESSION or table in self._counted_refusals:
                return
            self._counted_refusals.add(table)
        if judged.verdict is Verdict.REGRESSION:
            self._tally["regressions"] += 1
        elif judged.verdict is Verdict.FIXED_UPSTREAM:
            self._tally["fixed"] += 1
        elif known_failure(judged):
            self._tally["known"] += 1

    def _bar_tally(self) -> str:
        """The verdicts so far, short enough for the bar."""
        regressions, fixed = counted(self._tally["regressions"], "regression"), self._tally["fixed"]
        fixed_text = f", {fixed} fixed" if fixed else ""
        return f"{regressions}{fixed_text}, {self._tally['known']} known"

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
