"""A run stopped by Ctrl-C, SIGTERM, SIGHUP or the loss of its output: the moment it came (no
cell measured after it is recorded), and the message that tells the user how to complete the
run."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from lakecompat.harness.results.hints import make_resume_command, resume_command, shown
from lakecompat.harness.run import console

#: The signals that stop a run: Ctrl-C (SIGINT to the terminal's process group), SIGTERM (a
#: CI job cancelled, `kill`) and SIGHUP (the terminal closed, an SSH connection dropped).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What the message says stopped the run, by signal (Ctrl-C needs no words).
CAUSES = {
    signal.SIGINT: "",
    signal.SIGTERM: "SIGTERM",
    signal.SIGHUP: "SIGHUP: the terminal closed",
}
#: How a lost output stream stops the main thread: a signal of its own, not SIGINT. A Ctrl-C
#: that also ended the reader of the output (`lakecompat run | tee log`) is pending before
#: the loss is noticed, and Python runs the handlers of pending signals in the order of their
#: numbers: SIGINT's first, so that the stop is told as the Ctrl-C it was.
LOST_OUTPUT = signal.SIGUSR2


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by a signal; its folders keep every cell finished before it."""

    def __init__(
        self, run_dirs: list[Path], finished: int, reports_dir: Path, cause: str = ""
    ) -> None:
        super().__init__(f"interrupted; {finished} finished cells kept")
        self.run_dirs = run_dirs
        self.finished = finished
        self.reports_dir = reports_dir
        self.cause = cause

    def message(self) -> str:
        """What to tell the user: where the cells are and the command that completes the run."""
        where = " and ".join(shown(path) for path in self.run_dirs)
        why = f" ({self.cause})" if self.cause else ""
        kept = f"{self.finished} finished cells are kept in {where}"
        lines = [f"lakecompat: interrupted{why}; {kept}."]
        for folder in self.run_dirs:
            lines.append(f"Complete the run with: {resume_command(folder, self.reports_dir)}")
        make = make_resume_command(self.run_dirs[0], self.reports_dir)
        if make:
            lines.append(f"(with make: {make})")
        return "\n".join(lines)


@dataclass
class Stop:
    """Why a watched run stopped ("" for Ctrl-C, or before it stopped)."""

    cause: str = ""
    #: What a lost output stream would name as the cause (`LOST_OUTPUT`), until a stop.
    lost: str = ""
    #: Set by the first stop signal, before anything else it does: a second signal that comes
    #: while the first is still being handled (two Ctrl-C, a wrapper forwarding its own) must
    #: not wait on the event's lock the first one holds.
    signalled: bool = False
    #: Set once every cell is measured: neither a signal nor a lost output stops the run any
    #: more (its reports are written, and what it prints goes where it can).
    finished: bool = False


@contextmanager
def watching(stopped: threading.Event, stop: Stop | None = None) -> Iterator[Stop]:
    """While the block runs, a stop signal (or a lost output stream, `harness.run.console`)
    sets `stopped` the moment it arrives (readers on other threads then record nothing more),
    notes its cause in `stop`, then raises KeyboardInterrupt in the main thread, once: a
    signal after the first is ignored, so that nothing breaks off the engines' stop (a hung-up
    terminal's shell sends SIGHUP again), and so is one after every cell was measured
    (`Stop.finished`). Outside the main thread: nothing is watched."""
    stop = stop or Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    main = threading.main_thread().ident

    def on_signal(number: int, frame: FrameType | None) -> None:
        if stop.signalled or stopped.is_set() or stop.finished:
            return
        stop.signalled = True
        # Only this handler sets the event, once: taking its lock cannot wait on the main
        # thread, nor on a handler of an earlier signal.
        stopped.set()
        if number == LOST_OUTPUT:
            stop.cause = stop.lost
        else:
            stop.cause = CAUSES.get(signal.Signals(number), "")
        # What the libraries log from here on is about connections the stop breaks (Py4J's
        # tracebacks of the interrupted call, the Trino client's retries): not for the user.
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    def on_lost(name: str) -> None:
        if stopped.is_set() or stop.lost or stop.finished:
            return
        stop.lost = f"its {'standard output' if name == 'stdout' else 'error output'} was closed"
        # A signal, not a flag: it also ends a system call the main thread waits in.
        signal.pthread_kill(main, LOST_OUTPUT)  # type: ignore[arg-type]

    with _handled(on_signal, LOST_OUTPUT), console.listening(on_lost):
        yield stop


@contextmanager
def holding() -> Iterator[None]:
    """While the block runs (a run's engines stop, its reports are written), a stop signal is
    ignored: breaking that off would leave services running and the run folder half done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _handled(lambda number, frame: None):
        yield


@contextmanager
def _handled(
    handler: Callable[[int, FrameType | None], None], *more: signal.Signals
) -> Iterator[None]:
    """`handler` handles every stop signal (and `more`) while the block runs; SIGHUP stays
    ignored where the process was started to ignore it (`nohup`: the run outlives its
    terminal)."""
    signals = (*STOP_SIGNALS, *more)
    previous = {number: signal.getsignal(number) for number in signals if not stays_ignored(number)}
    for number in previous:
        signal.signal(number, handler)
    try:
        yield
    finally:
        for number, before in previous.items():
            if before is not None:
                signal.signal(number, before)


def stays_ignored(number: int) -> bool:
    """Whether stop signal `number` is ignored and stays so: SIGHUP under `nohup`. SIGINT
    and SIGTERM are always taken, even where a shell started the run in the background with
    Ctrl-C ignored: `kill -INT` still stops it cleanly."""
    return number == signal.SIGHUP and signal.getsignal(number) is signal.SIG_IGN


def restore_logging() -> None:
    """Let the libraries log again once a stopped run has cleaned up."""
    logging.disable(logging.NOTSET)
