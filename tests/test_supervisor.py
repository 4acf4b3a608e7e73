"""Tests for engines.infra.supervisor that start real processes."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from support import gone

from lakecompat.engines.infra.jdk import find_jdk
from lakecompat.engines.infra.reaper import MARKER as REAPER_MARKER
from lakecompat.engines.infra.reaper import Reaper
from lakecompat.engines.infra.supervisor import (
    AllOf,
    FutureDone,
    HttpReady,
    LogMatches,
    PortOpen,
    Probe,
    Service,
    ServiceError,
    ServiceTimeout,
    active_services,
    free_port,
    java_tmpdir,
    kill_children_mentioning,
    stop_all,
)

REPO_ROOT = Path(__file__).resolve().parents[1]

# Leader that starts a grandchild (same process group) and reports its pid.
SPAWNS_GRANDCHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("grandchild", child.pid, flush=True)
time.sleep(60)
"""


def py(code: str) -> list[str]:
    return [sys.executable, "-u", "-c", textwrap.dedent(code)]


def http_server(port: int) -> list[str]:
    return [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", str(port)]


def live_members(pgid: int) -> list[int]:
    """Pids of non-zombie processes in the group, read independently of the supervisor."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            pids.append(int(stat.parent.name))
    return pids


def assert_group_gone(pgid: int | None, reap_timeout_s: float = 60.0) -> None:
    """Nothing of the group runs any more, and once init reaped the zombies it is gone."""
    assert pgid is not None
    assert live_members(pgid) == []
    # Orphaned grandchildren stay zombies until init reaps them, which can take a moment.
    deadline = time.monotonic() + reap_timeout_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"process group {pgid} still exists"
        time.sleep(0.05)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "logs"


@pytest.fixture(autouse=True)
def _no_leaks():
    yield
    leaked = active_services()
    stop_all(grace_s=1)
    assert not leaked, f"test left services running: {leaked}"


def test_free_port_is_bindable_on_loopback() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert 1024 <= port <= 65535


def test_ready_via_port_open(log_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    svc = Service(
        "http", http_server(port), log_dir, wait=PortOpen(port), timeout_s=120, cwd=tmp_path
    )
    with svc:
        assert svc.running
        assert svc in active_services()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as resp:
            assert resp.status == 200
        pgid = svc.pid
    assert not svc.running
    assert_group_gone(pgid)
    assert svc not in active_services()
    assert svc.log_path == log_dir / "http.log"


def test_ready_via_http_predicate_and_cwd(log_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "served-marker.txt").write_text("hi")
    seen: list[int] = []

    def lists_marker(status: int, body: bytes) -> bool:
        seen.append(status)
        return status == 200 and b"served-marker.txt" in body

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    wait = AllOf(PortOpen(port), HttpReady(url, lists_marker))
    with Service("http", http_server(port), log_dir, wait=wait, timeout_s=120, cwd=tmp_path) as svc:
        assert svc.running
        assert seen and seen[-1] == 200


def test_service_binds_loopback_only(log_dir: Path, tmp_path: Path) -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs Linux /proc/net/tcp")
    port = free_port()
    with Service(
        "http", http_server(port), log_dir, wait=PortOpen(port), timeout_s=120, cwd=tmp_path
    ):
        listeners = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            if not Path(table).exists():
                continue
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, hex_port = local.rsplit(":", 1)
                if int(hex_port, 16) == port and state == "0A":  # 0A = LISTEN
                    listeners.append(addr)
    assert listeners == ["0100007F"]  # 127.0.0.1 only, nothing on 0.0.0.0 or ::


def test_http_ready_refuses_non_loopback_urls() -> None:
    with pytest.raises(ValueError, match=r"127\.0\.0\.1/localhost"):
        HttpReady("http://example.com/health")
    HttpReady("http://localhost:1/")  # accepted


def test_probe_and_allof_semantics(log_dir: Path) -> None:
    svc = Service("unused", ["true"], log_dir)
    calls: list[str] = []

    def record(name: str, value: bool) -> Probe:
        return Probe(lambda: calls.append(name) or value)

    assert Probe(lambda: 1 / 0).ready(svc) is False
    assert AllOf(record("a", True), record("b", True)).ready(svc) is True
    assert AllOf(record("c", False), record("d", True)).ready(svc) is False
    assert calls == ["a", "b", "c"]  # stops at the first strategy that is not ready


def test_timeout_error_contains_log_tail_and_hint(log_dir: Path) -> None:
    code = """
    import time
    for i in range(50):
        print("line", i)
    print("MARKER-SLOW-42", flush=True)
    time.sleep(60)
    """
    svc = Service("slow", py(code), log_dir, timeout_s=1.5, hint="try HINT-XYZ")

    def never_ready() -> bool:
        """Not ready, ever; the first check waits until the service has logged its lines, so
        that the timeout's message holds them however slowly a busy machine starts Python."""
        deadline = time.monotonic() + 120
        while "MARKER-SLOW-42" not in svc.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        return False

    svc.wait = Probe(never_ready)
    started = time.monotonic()
    with pytest.raises(ServiceTimeout) as excinfo:
        svc.start()
    elapsed = time.monotonic() - started
    message = str(excinfo.value)
    # It waited its timeout, and gave up long before the service (asleep for 60 s) would end.
    assert 1.5 <= elapsed < 45
    assert "'slow'" in message
    assert "not ready after 1.5 s" in message
    assert "MARKER-SLOW-42" in message
    assert "hint: try HINT-XYZ" in message
    tail = [line for line in message.splitlines() if line.startswith("  | ")]
    assert len(tail) == 40
    assert tail[0] == "  | line 11" and tail[-1] == "  | MARKER-SLOW-42"
    assert_group_gone(svc.pid)


def test_early_exit_raises_with_exit_code_and_log_tail(log_dir: Path) -> None:
    code = """
    import sys
    print("MARKER-BOOM config is broken", file=sys.stderr)
    sys.exit(3)
    """
    svc = Service(
        "crashy", py(code), log_dir, wait=PortOpen(free_port()), timeout_s=120, hint="check HINT-C"
    )
    started = time.monotonic()
    with pytest.raises(ServiceError) as excinfo:
        svc.start()
    assert not isinstance(excinfo.value, ServiceTimeout)
    assert time.monotonic() - started < 60  # noticed the exit, did not wait for the timeout
    message = str(excinfo.value)
    assert "'crashy' exited with code 3" in message
    assert "MARKER-BOOM config is broken" in message  # stderr goes to the log too
    assert "hint: check HINT-C" in message
    assert not svc.running


def test_missing_executable_raises_service_error(log_dir: Path) -> None:
    svc = Service("ghost", ["/nonexistent/bin/hive"], log_dir, hint="set HIVE_HOME")
    with pytest.raises(ServiceError, match=r"(?s)could not be launched.*hint: set HIVE_HOME"):
        svc.start()
    assert active_services() == []


def test_log_matches_ignores_previous_runs_and_command_echo(log_dir: Path) -> None:
    log_dir.mkdir()
    (log_dir / "quiet.log").write_text("READY from an older run\n")
    svc = Service("quiet", py("import time; time.sleep(60)  # READY"), log_dir, timeout_s=1)
    svc.wait = LogMatches(r"READY")
    with pytest.raises(ServiceTimeout):
        svc.start()
    log = (log_dir / "quiet.log").read_text()
    assert log.startswith("READY from an older run\n")  # appended, not truncated
    assert "starting quiet:" in log


def test_stop_kills_grandchildren(log_dir: Path) -> None:
    svc = Service("tree", py(SPAWNS_GRANDCHILD), log_dir, wait=LogMatches(r"grandchild \d+"))
    svc.start()
    match = re.search(r"grandchild (\d+)", svc.log_text())
    assert match is not None
    grandchild, pgid = int(match.group(1)), svc.pid
    assert pgid is not None and os.getpgid(grandchild) == pgid
    svc.stop(grace_s=5)
    assert grandchild not in live_members(pgid)
    assert_group_gone(pgid)
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)
    svc.stop()  # idempotent
    assert not svc.running


# A JVM that unpacks a "native library" as snappy-java and Trino's Hadoop do, then runs on.
UNPACKS = """
public class Unpacks {
    public static void main(String[] args) throws Exception {
        java.io.File library = java.io.File.createTempFile("libnative-", ".so");
        library.deleteOnExit();
        System.out.println("unpacked " + library);
        Thread.sleep(120_000);
    }
}
"""


def test_a_killed_jvm_unpacks_into_its_own_folder_which_is_deleted(
    log_dir: Path, tmp_path: Path
) -> None:
    """kill -9 skips the JVM's deleteOnExit: what it unpacked must not stay behind in /tmp."""
    source = tmp_path / "Unpacks.java"
    source.write_text(UNPACKS)
    scratch = tmp_path / "jvm" / "tmp"
    java = str(find_jdk((17, 21, 25), "the test JVM").java)
    argv = [java, "-Xshare:auto", java_tmpdir(scratch), str(source)]
    service = Service(
        "unpacks", argv, log_dir, wait=LogMatches(r"unpacked \S+"), timeout_s=60, scratch=scratch
    )
    service.start()
    unpacked = Path(re.search(r"unpacked (\S+)", service.log_text()).group(1))
    assert unpacked.parent == scratch
    assert unpacked.is_file()
    os.killpg(service.pid, signal.SIGKILL)  # the engine killed behind lakecompat's back
    deadline = time.monotonic() + 30
    while service.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert unpacked.is_file()  # the JVM could not delete it
    service.stop()
    assert not scratch.exists()
    # A new launch starts from an empty folder.
    scratch.mkdir(parents=True)
    (scratch / "left-over").write_text("x")
    service.start()
    assert any(path.name.startswith("libnative-") for path in scratch.iterdir())
    assert not (scratch / "left-over").exists()
    service.stop()
    assert not scratch.exists()


def test_a_failed_start_beside_ends_the_wait_at_once(log_dir: Path, tmp_path: Path) -> None:
    """A service started beside the one it needs stops waiting when that one fails."""
    port = free_port()
    needed: Future[None] = Future()
    service = Service(
        "needs-another",
        http_server(port),
        log_dir,
        wait=AllOf(PortOpen(port), FutureDone(needed)),
        timeout_s=60,
        cwd=tmp_path,
    )
    threading.Timer(
        1.0, needed.set_exception, [ServiceError("the Metastore did not start")]
    ).start()
    started = time.monotonic()
    with pytest.raises(ServiceError, match="the Metastore did not start"):
        service.start()
    assert time.monotonic() - started < 20
    assert not service.running
    assert_group_gone(service.pid)


def test_stop_is_safe_when_never_started(log_dir: Path) -> None:
    svc = Service("never", ["true"], log_dir)
    svc.stop()
    assert svc.pid is None and not svc.running


def test_context_manager_stops_on_exception(log_dir: Path) -> None:
    svc = Service("ctx", py(SPAWNS_GRANDCHILD), log_dir, wait=LogMatches("grandchild"))
    with pytest.raises(RuntimeError), svc:
        pgid = svc.pid
        raise RuntimeError("test body failed")
    assert_group_gone(pgid)


IGNORES_TERM_IN_LEADER = """
import signal, time
signal.signal(signal.SIGTERM, lambda *a: print("leader ignored TERM", flush=True))
print("READY", flush=True)
while True:
    time.sleep(0.1)
"""

IGNORES_TERM_IN_GRANDCHILD = """
import subprocess, sys, time
child_code = '''
import signal, time
signal.signal(signal.SIGTERM, lambda *a: print("grandchild ignored TERM", flush=True))
print("READY", flush=True)
while True:
    time.sleep(0.1)
'''
subprocess.Popen([sys.executable, "-u", "-c", child_code])
time.sleep(60)
"""


@pytest.mark.parametrize(
    ("code", "ignored_by"),
    [(IGNORES_TERM_IN_LEADER, "leader"), (IGNORES_TERM_IN_GRANDCHILD, "grandchild")],
)
def test_sigterm_ignorers_are_killed_after_grace(log_dir: Path, code: str, ignored_by: str) -> None:
    svc = Service("stubborn", py(code), log_dir, wait=LogMatches("^READY$"), timeout_s=120)
    svc.start()
    pgid = svc.pid
    assert pgid is not None
    started = time.monotonic()
    svc.stop(grace_s=1)
    elapsed = time.monotonic() - started
    # It waited the grace it was given, then killed: it did not wait its default 10 s.
    assert 1 <= elapsed < 10
    assert f"{ignored_by} ignored TERM" in svc.log_text()  # got SIGTERM first
    assert_group_gone(pgid)


def test_stop_all_stops_newest_first(log_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    original_stop = Service.stop

    def recording_stop(self: Service, grace_s: float = 10.0) -> None:
        order.append(self.name)
        original_stop(self, grace_s)

    monkeypatch.setattr(Service, "stop", recording_stop)
    services = [
        Service(name, py(SPAWNS_GRANDCHILD), log_dir, wait=LogMatches("grandchild"))
        for name in ("a", "b", "c")
    ]
    for svc in services:
        svc.start()
    pgids = [svc.pid for svc in services]
    assert active_services() == services
    order.clear()  # start() also calls stop() to clean up after a previous run
    stop_all(grace_s=5)
    assert order == ["c", "b", "a"]
    assert active_services() == []
    for pgid in pgids:
        assert_group_gone(pgid)


PARENT_SCRIPT = """
import signal, sys, time
from pathlib import Path
from lakecompat.engines.infra.supervisor import LogMatches, Service

# Python ignores SIGINT if it started with it ignored (e.g. a background job); undo that.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, lambda *a: print("PREVIOUS-HANDLER", flush=True))
svc = Service("svc", [sys.executable, "-u", "-c", sys.argv[2]], Path(sys.argv[1]),
              wait=LogMatches("grandchild"), timeout_s=120)
svc.start()
print(svc.pid, flush=True)
time.sleep(60)
"""


@contextlib.contextmanager
def parent_with_a_service(log_dir: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A Python process (`PARENT_SCRIPT`) that started a service with a grandchild, in a
    session of its own: (the process, the service's group). Whatever of them is left when the
    block ends (a test that already failed) is killed."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT_SCRIPT, str(log_dir), SPAWNS_GRANDCHILD],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    pgid = None
    try:
        readable, _, _ = select.select([parent.stdout], [], [], 120)
        assert readable, "parent script did not start its service in time"
        pgid = int(parent.stdout.readline())
        yield parent, pgid
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait()
        if pgid is not None and live_members(pgid):
            os.killpg(pgid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_parent_stops_services(log_dir: Path, sig: signal.Signals) -> None:
    with parent_with_a_service(log_dir) as (parent, pgid):
        assert live_members(pgid)
        parent.send_signal(sig)
        out, err = parent.communicate(timeout=120)
        assert_group_gone(pgid)
    if sig == signal.SIGTERM:
        assert parent.returncode == 143, err
        assert "PREVIOUS-HANDLER" in out  # chained to the handler that was there before
        assert "Traceback" not in err
    else:
        assert parent.returncode != 0
        assert "KeyboardInterrupt" in err


def test_a_parent_killed_with_sigkill_leaves_no_service_behind(log_dir: Path) -> None:
    """`kill -9` of a run: it cannot stop its services, its reaper does."""
    with parent_with_a_service(log_dir) as (parent, pgid):
        assert len(live_members(pgid)) == 2  # the service and its grandchild
        reapers = until_found(lambda: [p for p in reaper_pids() if parent_of(p) == parent.pid])
        assert len(reapers) == 1
        os.killpg(parent.pid, signal.SIGKILL)  # the run's whole group: not the reaper's
        parent.wait(30)
        deadline = time.monotonic() + 30
        while live_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert_group_gone(pgid)
        gone(reapers[0], 30)  # and the reaper ends once its work is done


def test_the_reaper_ends_only_the_groups_still_listed(log_dir: Path) -> None:
    kept = subprocess.Popen(py("import time; time.sleep(60)"), start_new_session=True)
    ended = subprocess.Popen(py("import time; time.sleep(60)"), start_new_session=True)
    reaper = Reaper(grace_s=5)
    try:
        reaper.watch(kept.pid)
        reaper.watch(ended.pid)
        reaper.release(kept.pid)  # stopped by its owner, say; the number may be reused
        assert reaper.pid is not None
        assert until_found(lambda: [p for p in reaper_pids() if p == reaper.pid])
        reaper._proc.stdin.close()  # as when its owner dies
        assert ended.wait(30) == -signal.SIGTERM
        assert kept.poll() is None
        gone(reaper.pid, 30)
    finally:
        for proc in (kept, ended):
            proc.kill()
            proc.wait()


def reaper_pids() -> list[int]:
    return [
        int(cmd.parent.name)
        for cmd in Path("/proc").glob("[0-9]*/cmdline")
        if _reads(cmd) and REAPER_MARKER in _reads(cmd)
    ]


def until_found(find: Callable[[], list[int]], seconds: float = 30) -> list[int]:
    """What `find` finds once it finds something (a process started a moment ago runs
    Python's command line until it has run its own), or [] after `seconds`."""
    deadline = time.monotonic() + seconds
    while not (found := find()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _reads(path: Path) -> str:
    try:
        return path.read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


# Exits by itself two seconds after SIGTERM, as a JVM writing its class archive at exit does.
SLOW_TO_EXIT = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: (time.sleep(2), sys.exit(0)))
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(("grace", "code"), [(8.0, 0), (0.5, -signal.SIGKILL)])
def test_stop_waits_the_services_own_grace(tmp_path: Path, grace: float, code: int) -> None:
    """A service slow to exit is waited for as long as its `stop_grace_s` says, then killed."""
    ended: list[int | None] = []
    argv = [sys.executable, "-c", SLOW_TO_EXIT]
    service = Service(
        "slow-exit",
        argv,
        tmp_path,
        LogMatches("ready"),
        after_exit=ended.append,
        stop_grace_s=grace,
    ).start()
    service.stop()
    assert ended == [code]


def test_a_child_a_library_lost_is_found_by_its_command_line_and_reaped() -> None:
    """A child whose handle is gone (PySpark's JVM after a start broken off) is killed and
    reaped by what its command line holds; other children are left alone."""
    marker = f"lakecompat-test-{os.getpid()}-{time.monotonic_ns()}"
    lost = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert kill_children_mentioning(marker) == [lost.pid]
        assert not Path(f"/proc/{lost.pid}").exists()  # killed and reaped: no zombie left
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
