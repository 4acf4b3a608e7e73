"""A run stopped by Ctrl-C or SIGTERM: the moment the signal came (no cell measured after it is
recorded), and the message that tells the user how to complete the run."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from harness.results.hints import make_resume_command, resume_command, shown

#: The signals that stop a run: Ctrl-C (SIGINT to the terminal's process group) and SIGTERM.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by a signal; its folders keep every cell finished before it."""

    def __init__(self, run_dirs: list[Path], finished: int, reports_dir: Path) -> None:
        super().__init__(f"interrupted; {finished} finished cells kept")
        self.run_dirs = run_dirs
        self.finished = finished
        self.reports_dir = reports_dir

    def message(self) -> str:
        """What to tell the user: where the cells are and the command that completes the run."""
        where = " and ".join(shown(path) for path in self.run_dirs)
        lines = [f"lakecompat: interrupted; {self.finished} finished cells are kept in {where}."]
        for folder in self.run_dirs:
            lines.append(f"Complete the run with: {resume_command(folder, self.reports_dir)}")
        make = make_resume_command(self.run_dirs[0], self.reports_dir)
        if make:
            lines.append(f"(with make: {make})")
        return "\n".join(lines)


@contextmanager
def watching(stopped: threading.Event) -> Iterator[None]:
    """While the block runs, a stop signal sets `stopped` the moment it arrives (readers on
    other threads then record nothing more), then does what it did before: raise
    KeyboardInterrupt in the main thread. Outside the main thread: nothing is watched."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}

    def on_signal(number: int, frame: FrameType | None) -> None:
        # Only this handler sets the event, so taking its lock cannot wait on the main thread.
        stopped.set()
        # What the libraries log from here on is about connections the stop breaks (Py4J's
        # tracebacks of the interrupted call, the Trino client's retries): not for the user.
        logging.disable(logging.CRITICAL)
        before = previous[number]
        if callable(before):
            before(number, frame)
        raise KeyboardInterrupt

    for number in STOP_SIGNALS:
        signal.signal(number, on_signal)
    try:
        yield
    finally:
        for number, before in previous.items():
            if before is not None:
                signal.signal(number, before)


def restore_logging() -> None:
    """Let the libraries log again once a stopped run has cleaned up."""
    logging.disable(logging.NOTSET)
