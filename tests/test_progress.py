"""The progress bar on a real terminal (a pseudo-terminal), sized and unsized."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import termios
from collections.abc import Iterator

import pytest
from support import made_cell

from harness.run.progress import FALLBACK_COLUMNS, Progress


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
    return os.read(controller, 65536).decode(errors="replace")


def bar_lines(text: str) -> list[str]:
    """The bar as last drawn at 3 of 3 cells."""
    return [line for line in text.replace("\r", "\n").splitlines() if "3/3" in line]


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
