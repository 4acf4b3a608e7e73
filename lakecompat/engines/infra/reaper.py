"""Ends a run's services when the run itself is killed with SIGKILL and cannot stop them.

Every service runs in a process group of its own (`supervisor.Service`), which the run stops
when it ends, on Ctrl-C and on SIGTERM. A run killed with `kill -9` stops nothing: its Hive
Metastore, HiveServer2, Trino and library workers would go on running, holding their ports.

So the first service a process starts also starts a reaper: this file, run as a small Python
process in a session of its own (a Ctrl-C or a `kill -9` of the run's process group does not
reach it). It reads the groups to watch from a pipe whose write end only the run's process
holds: `+ <pgid>` when a service starts, `- <pgid>` once it has stopped. When the pipe closes
(the run's process is gone, however it ended), the reaper ends the groups still listed:
SIGTERM, then SIGKILL to what is left after a grace period. Then it exits.

Only the standard library: the reaper runs this file by its path, without lakecompat.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

#: What the reaper's command line says, to find it among the machine's processes.
MARKER = "lakecompat-reaper"
#: How long the groups have after SIGTERM before SIGKILL, when the run is gone.
GRACE_S = 10.0


class Reaper:
    """The parent's side: starts the reaper on first use (once per process: a forked child
    starts its own) and tells it the groups to watch."""

    def __init__(self, grace_s: float = GRACE_S) -> None:
        self.grace_s = grace_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._groups: set[int] = set()

    @property
    def pid(self) -> int | None:
        """The reaper's pid, once started by this process."""
        return self._proc.pid if self._proc is not None and self._owner == os.getpid() else None

    def watch(self, pgid: int) -> None:
        """End group `pgid` if this process dies before it calls `release(pgid)`."""
        with self._lock:
            if self._owner != os.getpid():
                self._groups = set()  # a forked child: its parent's groups are not its own
            self._groups.add(pgid)
            self._send(f"+ {pgid}\n")

    def release(self, pgid: int) -> None:
        """Group `pgid` is gone (or stopped by this process): no longer end it."""
        with self._lock:
            if pgid in self._groups and self._owner == os.getpid():
                self._groups.discard(pgid)
                self._send(f"- {pgid}\n")

    def _send(self, line: str) -> None:
        pipe = self._pipe()
        try:
            pipe.write(line.encode())
            pipe.flush()
        except OSError:
            # The reaper is gone (killed on its own): a new one watches all the groups.
            self._proc = None
            self._pipe()

    def _pipe(self) -> IO[bytes]:
        if self._proc is None or self._owner != os.getpid() or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-S", str(Path(__file__)), MARKER, f"{self.grace_s:g}"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self._owner = os.getpid()
            assert self._proc.stdin is not None
            self._proc.stdin.write("".join(f"+ {g}\n" for g in sorted(self._groups)).encode())
            self._proc.stdin.flush()
        assert self._proc.stdin is not None
        return self._proc.stdin


def session_members(pgid: int) -> list[int]:
    """Live processes of group `pgid` that are still in the session its leader started (a
    service's group; a pid reused by an unrelated process is in another session)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, group, session = stat.read_text().rsplit(")", 1)[1].split()[:4]
        except (OSError, IndexError, ValueError):
            continue
        if int(group) == pgid and int(session) == pgid and state not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def end_groups(groups: set[int], grace_s: float) -> None:
    """SIGTERM each group's processes, SIGKILL what is left after `grace_s`."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        for pgid in groups:
            if session_members(pgid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while any(session_members(g) for g in groups) and time.monotonic() < deadline:
            time.sleep(0.1)


def serve(stream: IO[bytes], grace_s: float) -> None:
    """The reaper: follow the pipe until it closes, then end the groups still listed."""
    groups: set[int] = set()
    for line in stream:
        sign, _, number = line.decode(errors="replace").strip().partition(" ")
        if number.isdigit():
            (groups.add if sign == "+" else groups.discard)(int(number))
    end_groups(groups, grace_s)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the closing pipe ends the reaper
    serve(sys.stdin.buffer, float(sys.argv[2]) if len(sys.argv) > 2 else GRACE_S)
