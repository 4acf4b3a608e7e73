"""Start local service processes, wait until they are ready, and never leave them behind."""

from __future__ import annotations

import atexit
import contextlib
import http.client
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from lakecompat.engines.infra.reaper import Reaper

POLL_INTERVAL_S = 0.2
LOG_TAIL_LINES = 40
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})
# An HTTP(S)_PROXY in the environment must not intercept loopback probes.
_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class ServiceError(RuntimeError):
    """A service failed to start or exited before it became ready."""


class ServiceTimeout(ServiceError):
    """A service did not become ready within its timeout."""


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@runtime_checkable
class WaitStrategy(Protocol):
    """Decides whether a started service is ready; called repeatedly until it is."""

    def ready(self, service: Service) -> bool: ...


@dataclass
class PortOpen:
    """Ready once a TCP connection to ``host:port`` succeeds."""

    port: int
    host: str = "127.0.0.1"
    connect_timeout_s: float = 0.5

    def ready(self, service: Service) -> bool:
        try:
            with socket.create_connection((self.host, self.port), self.connect_timeout_s):
                return True
        except OSError:
            return False


@dataclass
class HttpReady:
    """Ready once a GET on a loopback ``url`` answers and ``predicate(status, body)`` holds.

    Without a predicate any 2xx status counts as ready.
    """

    url: str
    predicate: Callable[[int, bytes], bool] | None = None
    request_timeout_s: float = 1.0

    def __post_init__(self) -> None:
        if urlsplit(self.url).hostname not in _LOOPBACK_HOSTS:
            raise ValueError(f"HttpReady only probes 127.0.0.1/localhost, got {self.url!r}")

    def ready(self, service: Service) -> bool:
        try:
            with _NO_PROXY_OPENER.open(self.url, timeout=self.request_timeout_s) as resp:
                status, body = resp.status, resp.read(1 << 20)
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read(1 << 20)
        except (OSError, http.client.HTTPException):
            return False
        return bool(self.predicate(status, body)) if self.predicate else 200 <= status < 300


class LogMatches:
    """Ready once the service's log output (of the current run) matches ``regex``."""

    def __init__(self, regex: str | re.Pattern[str]) -> None:
        self.pattern = re.compile(regex, re.MULTILINE) if isinstance(regex, str) else regex

    def ready(self, service: Service) -> bool:
        return self.pattern.search(service.log_text()) is not None


@dataclass
class Probe:
    """Ready once ``check()`` returns a truthy value; exceptions count as not ready."""

    check: Callable[[], object]

    def ready(self, service: Service) -> bool:
        try:
            return bool(self.check())
        except Exception:  # noqa: BLE001 - any failure of a probe means "not ready yet"
            return False


@dataclass
class FutureDone:
    """Ready once `future` has finished: a service this one needs, started beside it. Its
    failure ends the wait at once, with that service's error."""

    future: Future[Any]

    def ready(self, service: Service) -> bool:
        if not self.future.done():
            return False
        self.future.result()  # raises what the other service's start raised
        return True


class AllOf:
    """Ready once every given strategy is ready (checked in order, stopping at the first no)."""

    def __init__(self, *strategies: WaitStrategy) -> None:
        self.strategies = strategies

    def ready(self, service: Service) -> bool:
        return all(strategy.ready(service) for strategy in self.strategies)


class Service:
    """A local process in its own process group, with a log file and a readiness check."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        log_dir: Path,
        wait: WaitStrategy | None = None,
        timeout_s: float = 120.0,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        hint: str = "",
        after_exit: Callable[[int | None], None] | None = None,
        scratch: Path | None = None,
        stop_grace_s: float = 10.0,
    ) -> None:
        self.name, self.argv, self.log_dir = name, list(argv), Path(log_dir)
        #: How long `stop()` waits for the process to exit after SIGTERM before SIGKILL.
        self.stop_grace_s = stop_grace_s
        self.wait, self.timeout_s, self.env, self.cwd, self.hint = wait, timeout_s, env, cwd, hint
        #: Called with the exit code (negative: ended by a signal) once the process is gone.
        self.after_exit = after_exit
        #: The process's own folder for temporary files (a JVM's `java.io.tmpdir`, see
        #: `java_tmpdir`): made empty before each launch, deleted once the process is gone,
        #: so that what a killed process unpacked there does not pile up in the machine's /tmp.
        self.scratch = scratch
        self._proc: subprocess.Popen[bytes] | None = None
        self._group_live = False
        self._log_start = 0

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    @property
    def pid(self) -> int | None:
        """Pid (and process group id) of the last launched process, or None."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and process_running(self._proc)

    def start(self) -> Service:
        """Launch the process and block until the wait strategy reports ready."""
        if self.running:
            raise ServiceError(f"service {self.name!r} is already running (pid {self.pid})")
        self.stop()  # leftovers of a previous run that exited on its own
        _install_sigterm_handler()
        self._launch()
        try:
            self._await_ready()
        except BaseException:
            # Covers KeyboardInterrupt/SystemExit during the wait, too.
            self.stop()
            raise
        return self

    def _begin(self, how: str) -> None:
        """Before a launch: the log folder made, the scratch folder emptied, and a line that
        says how the service starts (`how`) appended to its log."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch.mkdir(parents=True)
        with open(self.log_path, "ab") as log:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(f"--- {stamp} starting {self.name}{how}\n".encode())
            # Readiness and tails look only past this point, so earlier runs appended to
            # the same file (or the argv echoed above) cannot fake a match.
            self._log_start = log.tell()

    def _launch(self) -> None:
        self._begin(f": {shlex.join(self.argv)}")
        with open(self.log_path, "ab") as log:
            try:
                self._proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, **(self.env or {})},
                    cwd=self.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise ServiceError(self._failure(f"could not be launched: {exc}")) from exc
        self._group_live = True
        _reaper.watch(self._proc.pid)  # ended by the reaper should this process be killed
        with _registry_lock:
            _registry.append(self)

    def _await_ready(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while True:
            code = self._proc.poll() if self._proc is not None else None
            if code is not None:
                self.stop()
                raise ServiceError(self._failure(f"exited with code {code} before it was ready"))
            if self.wait is None or self.wait.ready(self):
                return
            if time.monotonic() >= deadline:
                self.stop()
                raise ServiceTimeout(self._failure(f"not ready after {self.timeout_s:g} s"))
            time.sleep(POLL_INTERVAL_S)

    def _failure(self, what: str) -> str:
        lines = [f"service {self.name!r} {what}", f"command: {shlex.join(self.argv)}"]
        lines.append(f"last {LOG_TAIL_LINES} log lines ({self.log_path}):")
        lines.extend(f"  | {line}" for line in self.log_tail(LOG_TAIL_LINES))
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def log_text(self) -> str:
        """Log output of the current (or last) run."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(self._log_start)
                return log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def log_tail(self, n: int = LOG_TAIL_LINES) -> list[str]:
        """The last ``n`` lines logged by the current (or last) run."""
        return self.log_text().splitlines()[-n:] if n > 0 else []

    def stop(self, grace_s: float | None = None) -> None:
        """SIGTERM the process group, SIGKILL whatever is left after ``grace_s`` (the service's
        `stop_grace_s` unless given). Idempotent."""
        proc = self._proc
        if proc is None or not self._group_live:
            return
        if grace_s is None:
            grace_s = self.stop_grace_s
        pgid = proc.pid  # start_new_session made the service its group leader
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        # Reap the leader first: as a zombie it would keep the group "alive".
        if not _wait_leader(proc, deadline) or not _wait_group_gone(pgid, deadline):
            _signal_group(pgid, signal.SIGKILL)
            _wait_leader(proc, time.monotonic() + 5.0)
            _wait_group_gone(pgid, time.monotonic() + 5.0)
        # Never signal this pgid again: once the group is gone the number can be reused.
        self._group_live = False
        _reaper.release(pgid)
        with _registry_lock:
            if self in _registry:
                _registry.remove(self)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.after_exit is not None:
            self.after_exit(proc.returncode)

    def kill(self) -> None:
        """SIGKILL the process group at once (a hung service); idempotent."""
        self.stop(grace_s=0)

    def __enter__(self) -> Service:
        return self if self.running else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def java_tmpdir(folder: Path) -> str:
    """The JVM option that puts its temporary files in `folder` instead of /tmp. JVMs unpack
    native libraries there (Snappy, zstd, LZ4, Brotli, Hadoop's) and delete them only when
    they exit cleanly; give the same folder to `Service(scratch=...)`. Not part of a class
    archive's key: the JVM maps an archive whatever this says."""
    return f"-Djava.io.tmpdir={folder}"


class ServiceHolder:
    """An engine's server process, held as the Service it was last started as (or None):
    stopping, killing and asking whether it runs are the same for every such server."""

    _service: Service | None = None

    def stop(self) -> None:
        if self._service is not None:
            self._service.stop()
            self._service = None

    @property
    def running(self) -> bool:
        return self._service is not None and self._service.running

    def kill(self) -> None:
        if self._service is not None:
            self._service.kill()


def process_running(proc: subprocess.Popen[Any]) -> bool:
    """Whether `proc` still runs. A killed multi-threaded process (a JVM) is a zombie while
    its other threads end, and cannot be reaped yet: that already counts as gone."""
    if proc.poll() is not None:
        return False
    try:
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: trust poll()
    return state not in ("Z", "X")


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def _wait_leader(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    return True


def _wait_group_gone(pgid: int, deadline: float) -> bool:
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def kill_children_mentioning(marker: str, wait_s: float = 10.0) -> list[int]:
    """Kill this process's children whose command line holds `marker`, and reap them: for a
    child launched by a library that lost its handle on it (a start broken off by Ctrl-C).
    Returns their pids."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and marker in command:
            found.append(int(entry.name))
    deadline = time.monotonic() + wait_s
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                break
            time.sleep(0.05)
    return found


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs; zombies do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed uid; it still exists
    # Orphaned members are reaped by init, which in containers may be slow or never
    # happen; such zombies are already dead but still accept signals.
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid pgrp ...", and comm may itself contain ")"
            state, _ppid, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError):
            continue
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False


_registry: list[Service] = []
#: Ends the services' groups if this process is killed before it can stop them (`kill -9`).
_reaper = Reaper()
# Re-entrant: the SIGTERM handler may run in the main thread while it holds the lock.
_registry_lock = threading.RLock()
_sigterm_installed = False
_previous_sigterm: Callable[..., object] | int | None = None
_handling_sigterm = False


def reaper() -> Reaper:
    """The reaper of this process: what it watches is ended should this process be killed."""
    return _reaper


def track(service: Service) -> None:
    """Count `service` among the started ones (`stop_all` stops it); a subclass that
    launches otherwise than `Service._launch` calls this once it runs."""
    with _registry_lock:
        if service not in _registry:
            _registry.append(service)


def untrack(service: Service) -> None:
    """`service` is stopped: `stop_all` no longer stops it."""
    with _registry_lock:
        if service in _registry:
            _registry.remove(service)


def run_to_end(argv: list[str], log_path: Path, env: dict[str, str] | None = None) -> int:
    """Run a command (a build step) to its end in a process group of its own, its output
    appended to `log_path`; ended with all its children on Ctrl-C, and by the reaper should
    this process be killed. Returns its exit code."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    _reaper.watch(proc.pid)
    try:
        return proc.wait()
    finally:
        if not _wait_group_gone(proc.pid, time.monotonic()):
            _signal_group(proc.pid, signal.SIGTERM)
            if not _wait_group_gone(proc.pid, time.monotonic() + 10.0):
                _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)
        _reaper.release(proc.pid)


def active_services() -> list[Service]:
    """Services started and not yet stopped, oldest first."""
    with _registry_lock:
        return list(_registry)


def stop_all(grace_s: float = 10.0) -> None:
    """Stop every tracked service, newest first (later services may depend on earlier ones)."""
    for service in reversed(active_services()):
        try:
            service.stop(grace_s)
        except OSError:
            continue  # keep going: one stubborn service must not leak all the others


def _on_sigterm(signum: int, frame: object) -> None:
    global _handling_sigterm
    # A second SIGTERM while we are already shutting down must not abort the cleanup.
    if _handling_sigterm:
        return
    _handling_sigterm = True
    try:
        # The previous handler first: a run notes that it is stopping before its services go,
        # so that no reader records a service's end as the error of the cell it was reading.
        if callable(_previous_sigterm):
            _previous_sigterm(signum, frame)
    finally:
        stop_all()
    raise SystemExit(128 + signum)


def _install_sigterm_handler() -> None:
    """Turn SIGTERM into stop_all() + SystemExit(143); only possible from the main thread."""
    global _sigterm_installed, _previous_sigterm
    # signal.signal() raises in other threads; a later start from the main thread will retry.
    if _sigterm_installed or threading.current_thread() is not threading.main_thread():
        return
    _sigterm_installed = True
    previous = signal.getsignal(signal.SIGTERM)
    # Respect a deliberate SIG_IGN; atexit still cleans up when the process ends.
    if previous is not signal.SIG_IGN:
        _previous_sigterm = previous
        signal.signal(signal.SIGTERM, _on_sigterm)


# KeyboardInterrupt and normal exits unwind through here; SIGTERM does via _on_sigterm.
atexit.register(stop_all)
