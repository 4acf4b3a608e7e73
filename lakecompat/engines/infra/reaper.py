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

Containers (`--containers`) are watched the same way: `+c <api> <id>` when one starts, `-c <api>
<id>` once removed. A container runs under its runtime, not in a group of the run; the reaper
removes those still listed through the Docker API at `<api>` (a `unix://` socket) before it
ends the groups, one of which may be that API's own service (Podman's). `+g <pattern>` names
cgroup folders (a glob below /sys/fs/cgroup) the runtime made for them: removed at the end
where empty.

Only the standard library: the reaper runs this file by its path, without lakecompat.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
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
        self._containers: set[tuple[str, str]] = set()
        self._cgroups: set[str] = set()

    @property
    def pid(self) -> int | None:
        """The reaper's pid, once started by this process."""
        return self._proc.pid if self._proc is not None and self._owner == os.getpid() else None

    def watch(self, pgid: int) -> None:
        """End group `pgid` if this process dies before it calls `release(pgid)`."""
        with self._lock:
            self._forget_if_forked()
            self._groups.add(pgid)
            self._send(f"+ {pgid}\n")

    def watch_container(self, api: str, container: str) -> None:
        """Remove `container` (through the Docker API at `api`, a `unix://` address) if this
        process dies before it calls `release_container`."""
        with self._lock:
            self._forget_if_forked()
            self._containers.add((api, container))
            self._send(f"+c {api} {container}\n")

    def release_container(self, api: str, container: str) -> None:
        """`container` is removed: no longer remove it."""
        with self._lock:
            if (api, container) in self._containers and self._owner == os.getpid():
                self._containers.discard((api, container))
                self._send(f"-c {api} {container}\n")

    def remove_empty_cgroups(self, pattern: str) -> None:
        """At the end, remove the cgroup folders matching `pattern` (below /sys/fs/cgroup)
        that nothing runs in."""
        with self._lock:
            self._forget_if_forked()
            if pattern not in self._cgroups:
                self._cgroups.add(pattern)
                self._send(f"+g {pattern}\n")

    def _forget_if_forked(self) -> None:
        if self._owner != os.getpid():
            # A forked child: its parent's groups and containers are not its own.
            self._groups, self._containers, self._cgroups = set(), set(), set()

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
            lines = [f"+ {g}\n" for g in sorted(self._groups)]
            lines += [f"+c {api} {c}\n" for api, c in sorted(self._containers)]
            lines += [f"+g {pattern}\n" for pattern in sorted(self._cgroups)]
            self._proc.stdin.write("".join(lines).encode())
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


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a unix socket: how the Docker API is reached on this machine."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def remove_container(api: str, container: str, timeout_s: float = 60.0) -> bool:
    """Remove `container` at once (`force`: a running one is killed) through the Docker API
    at `api` (`unix://<path>`); whether the API said it is gone."""
    if not api.startswith("unix://"):
        return False
    try:
        connection = _UnixConnection(api.removeprefix("unix://"), timeout_s)
        connection.request("DELETE", f"/containers/{container}?force=true&v=true")
        status = connection.getresponse().status
        connection.close()
    except OSError:
        return False
    return status in (200, 204, 404)


def serve(stream: IO[bytes], grace_s: float) -> None:
    """The reaper: follow the pipe until it closes, then remove the containers and end the
    groups still listed."""
    groups: set[int] = set()
    containers: set[tuple[str, str]] = set()
    cgroups: set[str] = set()
    for line in stream:
        sign, _, rest = line.decode(errors="replace").strip().partition(" ")
        if sign == "+g":
            cgroups.add(rest)
        elif sign in ("+c", "-c") and " " in rest:
            api, container = rest.split(" ", 1)
            (containers.add if sign == "+c" else containers.discard)((api, container))
        elif rest.isdigit():
            (groups.add if sign == "+" else groups.discard)(int(rest))
    for api, container in sorted(containers):
        remove_container(api, container)
    end_groups(groups, grace_s)
    for pattern in sorted(cgroups):
        remove_empty_cgroup_folders(pattern)


def remove_empty_cgroup_folders(pattern: str) -> None:
    """Remove the cgroup folders matching `pattern` (a glob below /sys/fs/cgroup) that nothing
    runs in; one something still runs in stays."""
    for folder in Path("/sys/fs/cgroup").glob(pattern.lstrip("/")):
        with contextlib.suppress(OSError):
            folder.rmdir()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the closing pipe ends the reaper
    serve(sys.stdin.buffer, float(sys.argv[2]) if len(sys.argv) > 2 else GRACE_S)
