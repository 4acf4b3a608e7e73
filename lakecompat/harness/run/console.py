"""The command's standard output and error, guarded: a pipe whose reader went away (`| tee`
ended by the same Ctrl-C, `| head`) or a terminal that hung up fails a write with EPIPE or
EIO. Unguarded, that error escaped from whatever was printing, halfway through stopping the
engines. Guarded, a lost stream is noticed once: what was written to it goes to the other
stream, else to the terminal (`/dev/tty`) when there is one, and whoever listens (a run in
progress, `harness.run.interrupt`) is told, so that the run stops as on Ctrl-C.

A pipe is also watched while a run lasts (`watch_pipes`): the run may write nothing to its
standard output for minutes, and a closed pipe says so at once (poll's POLLERR).
"""

from __future__ import annotations

import os
import select
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: Called with a lost stream's name ("stdout", "stderr").
Listener = Callable[[str], None]
#: Milliseconds between two looks at whether the pipe watch should end.
POLL_MS = 250


class Guarded:
    """A text stream whose failing writes go elsewhere (`Console.elsewhere`) and tell the
    listeners, once, that it is lost. Everything else is the stream's own."""

    def __init__(self, stream: TextIO, name: str, console: Console) -> None:
        self.stream = stream
        self.name = name
        self.lost = False
        self._console = console

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                written = self.stream.write(text)
                # At once, so that a failure is this text's, and it can go elsewhere (a
                # pipe's buffer would fail later, with text nobody can place any more).
                self.stream.flush()
                return written
            except (OSError, ValueError):
                self.lose()
        self._console.elsewhere(self, text)
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self.lose()

    def isatty(self) -> bool:
        return not self.lost and self.stream.isatty()

    def lose(self) -> None:
        """Note the stream as lost (once): its descriptor reads /dev/null from now on, so that
        no later write (the interpreter's last flush among them) fails again."""
        with self._console.lock:
            if self.lost:
                return
            self.lost = True
        descriptor = _descriptor(self.stream)
        if descriptor is not None:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, descriptor)
            os.close(null)
        self._console.tell(self.name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class Console:
    """The guarded standard output and error of one command, and who listens for a loss."""

    def __init__(self, stdout: TextIO, stderr: TextIO) -> None:
        self.lock = threading.Lock()
        self.stdout = Guarded(stdout, "stdout", self)
        self.stderr = Guarded(stderr, "stderr", self)
        self._listeners: list[Listener] = []
        self._terminal: TextIO | None = None
        self._terminal_tried = False

    def elsewhere(self, lost: Guarded, text: str) -> None:
        """Write what `lost` could not take to the other stream, else the terminal."""
        other = self.stderr if lost is self.stdout else self.stdout
        if not other.lost:
            other.write(text)
            return
        terminal = self._open_terminal()
        if terminal is None:
            return
        try:
            terminal.write(text)
            terminal.flush()
        except OSError:  # the terminal hung up too: nowhere left to say it
            self._terminal = None

    def tell(self, name: str) -> None:
        for listener in list(self._listeners):
            listener(name)

    @contextmanager
    def listening(self, listener: Listener) -> Iterator[None]:
        """While the block runs, `listener` hears of every stream lost."""
        self._listeners.append(listener)
        try:
            yield
        finally:
            self._listeners.remove(listener)

    def _open_terminal(self) -> TextIO | None:
        with self.lock:
            if not self._terminal_tried:
                self._terminal_tried = True
                try:
                    self._terminal = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115
                except OSError:  # no controlling terminal (CI, a service)
                    self._terminal = None
            return self._terminal


#: The console of the command being run (None outside `guarded`).
_current: Console | None = None


@contextmanager
def guarded() -> Iterator[Console]:
    """Guard `sys.stdout` and `sys.stderr` while the block runs."""
    global _current
    before = sys.stdout, sys.stderr
    console = Console(sys.stdout, sys.stderr)
    sys.stdout, sys.stderr = console.stdout, console.stderr  # type: ignore[assignment]
    _current = console
    try:
        yield console
    finally:
        _current = None
        sys.stdout, sys.stderr = before


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """While the block runs, `listener` hears of a lost stream of the guarded console, and
    the console's pipes are watched (`watch_pipes`); outside `guarded`: nothing."""
    console = _current
    if console is None:
        yield
        return
    done = threading.Event()
    watch = threading.Thread(
        target=watch_pipes, args=(console, done), name="lakecompat-output", daemon=True
    )
    with console.listening(listener):
        watch.start()
        try:
            yield
        finally:
            done.set()
            watch.join(timeout=5)


def watch_pipes(console: Console, done: threading.Event) -> None:
    """Until `done`, lose each of the console's streams that is a pipe (or socket) the moment
    its reader is gone (POLLERR on the writing end)."""
    poller = select.poll()
    watched: dict[int, Guarded] = {}
    for stream in (console.stdout, console.stderr):
        descriptor = _descriptor(stream.stream)
        if descriptor is not None and _is_pipe(descriptor) and descriptor not in watched:
            poller.register(descriptor, 0)  # no events asked: POLLERR and POLLHUP only
            watched[descriptor] = stream
    while watched and not done.is_set():
        for descriptor, _ in poller.poll(POLL_MS):
            poller.unregister(descriptor)
            watched.pop(descriptor).lose()


def _descriptor(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # pytest's capture, a closed stream
        return None


def _is_pipe(descriptor: int) -> bool:
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
