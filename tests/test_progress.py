"""The progress on a real terminal (a pseudo-terminal: the bar, sized and unsized) and in a
CI log: what it says of each cell, judged against the known outcomes."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import termios
from collections.abc import Iterator
from typing import TextIO

import pytest
from support import made_cell

from lakecompat.harness.results.expectations import Judge, Known
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run.progress import FALLBACK_COLUMNS, Progress


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal (its controlling and its terminal side); a new one reports 0 rows
    and 0 columns, as one opened by `script` without a window does."""
    controller, side = pty.openpty()
    yield controller, side
    for fd in (controller, side):
        os.close(fd)


def drawn(terminal: tuple[int, int], columns: int) -> str:
    """What a run of 3 cells draws on `terminal` set to `columns`."""
    controller, side = terminal
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    stream = os.fdopen(os.dup(side), "w")
    progress = Progress(stream)
    assert progress.interactive
    progress.begin(3)
    for index in range(3):
        progress.cell(made_cell(scenario=f"s/{index}"))
    progress.end()
    stream.flush()
    stream.close()
    return everything(controller)


def everything(controller: int) -> str:
    """What was written to a terminal: read until it has been quiet a moment (one read may
    return a part of it)."""
    shown = b""
    while select.select([controller], [], [], 0.5)[0]:
        shown += os.read(controller, 65536)
    return shown.decode(errors="replace")


def bar_lines(text: str, done: str = "3/3") -> list[str]:
    """The bar as last drawn at `done` cells."""
    return [line for line in text.replace("\r", "\n").splitlines() if done in line]


def test_a_terminal_without_a_width_gets_a_bar_of_the_fallback_width(
    terminal: tuple[int, int],
) -> None:
    # Sized to 0 columns, the bar would be squeezed to one block and its counts cut.
    (line,) = bar_lines(drawn(terminal, 0))
    assert line.endswith("cell/s]")
    assert line.count("\u2588") >= 20
    assert FALLBACK_COLUMNS - 5 <= len(line) <= FALLBACK_COLUMNS


def test_a_sized_terminal_gets_a_bar_of_its_width(terminal: tuple[int, int]) -> None:
    (line,) = bar_lines(drawn(terminal, 60))
    assert line.endswith("cell/s]")
    assert 55 <= len(line) <= 60


#: A known failure (spark's ERROR on s/known) and a known failure that now passes (s/fixed).
KNOWN = [
    Known(engine="spark", scenario="s/known", outcome=Outcome.ERROR, reason="reads no maps"),
    Known(engine="spark", scenario="s/fixed", outcome=Outcome.WRONG, reason="old bug"),
]
#: A regression, a known failure, a cell fixed upstream and a PASS, in that order.
CELLS = [
    made_cell(scenario="s/new", outcome=Outcome.WRONG, reason="NULLs where values were"),
    made_cell(scenario="s/known", outcome=Outcome.ERROR, reason="MapType unsupported"),
    made_cell(scenario="s/fixed"),
    made_cell(scenario="s/plain"),
]


def judged_run(stream: TextIO, verbose: bool = False) -> None:
    """The cells of CELLS through `Progress`, each judged against KNOWN as a run judges it."""
    judge = Judge(KNOWN)
    progress = Progress(stream, verbose=verbose)
    progress.begin(len(CELLS))
    for made in CELLS:
        progress.cell(made, judge(made))
    progress.end()


def test_a_ci_log_marks_regressions_and_counts_known_failures() -> None:
    log = io.StringIO()
    judged_run(log)
    lines = log.getvalue().splitlines()
    assert lines == [
        "[1/4] REGRESSION     WRONG         s/new · spark cow snapshot [v]: NULLs where "
        "values were (expected PASS)",
        "[3/4] FIXED UPSTREAM PASS          s/fixed · spark cow snapshot [v] "
        "(known WRONG: old bug)",
        "[4/4] so far: 4 reads: 2 pass, 1 wrong, 1 error, 0 unsupported, 0 engine failed"
        " · 0 of 4 tables refused by the writer · 1 regression, 1 fixed upstream, 1 known failure",
    ]


def test_verbose_lists_the_known_failures_too() -> None:
    log = io.StringIO()
    judged_run(log, verbose=True)
    assert (
        "[2/4] known          ERROR         s/known · spark cow snapshot [v]: "
        "MapType unsupported" in log.getvalue().splitlines()
    )


def test_a_terminal_shows_regressions_in_colour_and_the_counts_on_the_bar(
    terminal: tuple[int, int],
) -> None:
    controller, side = terminal
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    stream = os.fdopen(os.dup(side), "w")
    judged_run(stream)
    stream.close()
    shown = everything(controller)
    assert "\x1b[1;31mREGRESSION\x1b[0m     WRONG         s/new · spark" in shown
    assert "\x1b[1;32mFIXED UPSTREAM\x1b[0m PASS          s/fixed · spark" in shown
    assert "s/known" not in shown
    (bar,) = bar_lines(shown, "4/4")
    assert bar.startswith("1 regression, 1 fixed, 1 known: 100%")


def test_a_refused_table_is_counted_once_and_a_known_refusal_is_no_known_failure() -> None:
    """Every reader's cell of a table the writer refused is REJECTED: the counts say the table
    once; a refusal the known outcomes expect is said by the totals, not counted as a known
    failure, and a new one is one regression, however many cells the table has."""
    known = [
        Known(engine="*", scenario="s/refused", shape="*", outcome=Outcome.REJECTED, reason="no")
    ]
    cells = [
        made_cell(scenario=scenario, engine=engine, shape=shape, outcome=Outcome.REJECTED)
        for scenario in ("s/refused", "s/new_refusal")
        for engine in ("spark", "hive")
        for shape in ("all", "filter")
    ] + [made_cell(scenario="s/plain")]
    log = io.StringIO()
    judge = Judge(known)
    progress = Progress(log)
    progress.begin(len(cells))
    for made in cells:
        progress.cell(made, judge(made))
    assert log.getvalue().splitlines()[-1] == (
        "[9/9] so far: 1 read: 1 pass, 0 wrong, 0 error, 0 unsupported, 0 engine failed · "
        "2 of 3 tables refused by the writer · 1 regression, 0 fixed upstream, 0 known failures"
    )
