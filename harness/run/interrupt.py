"""A run stopped by Ctrl-C or SIGTERM: the moment the signal came (no cell measured after it is
recorded), and the message that tells the user how to complete the run."""

from __future__ import annotations

import logging
import shlex
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

#: The signals that stop a run: Ctrl-C (SIGINT to the terminal's process group) and SIGTERM.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Where `lakecompat run` puts run folders unless `--reports` says otherwise.
DEFAULT_REPORTS = Path("reports")


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by a signal; its folders keep every cell finished before it."""

    def __init__(self, run_dirs: list[Path], finished: int, reports_dir: Path) -> None:
        super().__init__(f"interrupted; {finished} finished cells kept")
        self.run_dirs = run_dirs
        self.finished = finished
        self.reports_dir = reports_dir

    def message(self) -> str:
        """What to tell the user: where the cells are and the command that completes the run."""
        folders = [_shown(path) for path in self.run_dirs]
        where = " and ".join(folders)
        lines = [f"lakecompat: interrupted; {self.finished} finished cells are kept in {where}."]
        for folder in folders:
            lines.append(f"Complete the run with: {resume_command(folder, self.reports_dir)}")
        extra = _reports_argument(self.reports_dir)
        lines.append(f'(with make: make matrix ARGS="--resume {folders[0]}{extra}")')
        return "\n".join(lines)


def resume_command(folder: str, reports_dir: Path) -> str:
    """`<program> run --resume <folder>`, as the user can paste it where they are."""
    return f"{program()} run --resume {folder}{_reports_argument(reports_dir)}"


def program() -> str:
    """How the user started lakecompat: `lakecompat` when that is what PATH finds, else the
    script's path (relative to here when below it, e.g. `.venv/bin/lakecompat`)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is None or script.name != "lakecompat":
        return "lakecompat"
    found = shutil.which("lakecompat")
    if found and Path(found).resolve() == script.resolve():
        return "lakecompat"
    return _shown(script)


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


def _reports_argument(reports_dir: Path) -> str:
    """` --reports DIR` when the run's reports folder is not the default one."""
    if reports_dir.resolve() == DEFAULT_REPORTS.resolve():
        return ""
    return f" --reports {_shown(reports_dir)}"


def _shown(path: Path) -> str:
    """A path as the user can paste it here: relative to the current folder when below it."""
    resolved = path.resolve()
    try:
        shown = str(resolved.relative_to(Path.cwd()))
    except ValueError:
        shown = str(resolved)
    return shlex.quote(shown)
