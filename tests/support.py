"""Helpers shared by the integration tests."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lakecompat.harness.results.expectations import Judged
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
SCRIPT = Path(sys.executable).parent / "lakecompat"
#: The scenarios and engines of the run conftest.py shares between modules (`shared_run`).
SHARED_SCENARIOS = ("rename_column/rename", "add_column/at_end")
SHARED_ENGINES = ("spark", "hive", "trino", "hudi-rs", "daft")
INSTANT = re.compile(r"\b\d{17}\b")
METASTORE_PORT = re.compile(r"thrift://127\.0\.0\.1:\d+")


def made_cell(**fields: Any) -> Cell:
    """A cell for tests that need one but no run: a Spark snapshot cell of a copy-on-write
    table, PASS, with `fields` in place of those defaults."""
    defaults: dict[str, Any] = {
        "scenario": "s/one",
        "category": "s",
        "title": "t",
        "table_type": "cow",
        "query_type": "snapshot",
        "engine": "spark",
        "engine_version": "1",
        "variant": "v",
        "settings": {},
        "writer": {},
        "outcome": Outcome.PASS,
        "reason": "",
    }
    return Cell(**{**defaults, **fields})


def load_script(name: str) -> ModuleType:
    """`scripts/<name>.py` as a module (scripts/ is not a package), for tests of its functions."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lakecompat(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the console script with `args` in `cwd`, as a user would: its output captured."""
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        env={**os.environ},
    )


@dataclass(frozen=True)
class SharedRun:
    """A finished run that several test modules read (see conftest.py): the folder it ran in
    (`reports/` inside), its run folder, its exit code, its cells and what it printed."""

    project: Path
    run_dir: Path
    returncode: int
    cells: list[Cell]
    stdout: str = ""
    stderr: str = ""

    def of(
        self,
        engines: tuple[str, ...] | None = None,
        scenarios: tuple[str, ...] | None = None,
        table_types: tuple[str, ...] | None = None,
        shapes: tuple[str, ...] | None = ("all",),
    ) -> list[Cell]:
        """The cells a run of only these engines, scenarios, table types and query shapes
        (by default `SELECT *` only) would record, in the run's order (None: all of them)."""
        return [
            c
            for c in self.cells
            if (engines is None or c.engine in engines)
            and (scenarios is None or c.scenario in scenarios)
            and (table_types is None or c.table_type in table_types)
            and (shapes is None or c.shape in shapes)
        ]


class InterruptAfter(Progress):
    """A silent progress reporter that raises KeyboardInterrupt after `cells` cells."""

    def __init__(self, cells: int) -> None:
        super().__init__(quiet=True)
        self.left = cells

    def cell(self, cell: Cell, judged: Judged | None = None) -> None:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt


def only_run(reports: Path) -> Path:
    """The one run folder below a reports folder (`runs/<id>`): where a run's reports are
    (`latest/` holds the default matrix's only)."""
    (run_dir,) = (reports / "runs").iterdir()
    return run_dir


def comparable(cells: list[Cell], run_dir: Path) -> list[dict[str, Any]]:
    """Cells without what differs between runs by design: timings, whether the table came from
    the table cache, the run's own path, the Hudi commit times (instants) in the SQL of
    incremental and time-travel queries, the Metastore's port in Trino's catalog properties,
    an error's lines after its first, and a log excerpt's lines after the first (which says
    where it comes from)."""
    rows = []
    for cell in cells:
        data = cell.to_dict()
        data.pop("seconds")
        data.pop("table_from")
        # An error's first line is its reason; the rest is the engine's own message, which may
        # name whichever of a table's files it happened to read first (Trino reads in parallel).
        error = data["evidence"]["error"]
        if error:
            data["evidence"]["error"] = error.splitlines()[0]
        log = data["evidence"]["log"]
        if log:
            data["evidence"]["log"] = log.splitlines()[0]
        sql = data["evidence"]["sql"]
        if sql:
            sql = METASTORE_PORT.sub(
                "thrift://127.0.0.1:<port>", sql.replace(str(run_dir), "<run>")
            )
            data["evidence"]["sql"] = INSTANT.sub("<instant>", sql)
        rows.append(data)
    return rows


def processes_mentioning(text: str) -> list[int]:
    """PIDs of live (not zombie) processes whose command line contains `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def interrupted_run(reports: Path, engine: str, pattern: str, after: int) -> Path:
    """Run `pattern` (copy-on-write only) with one engine, Ctrl-C after `after` cells.

    Returns the run folder, after checking that the interrupt reached the caller.
    """
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=(engine,),
        formats=("hudi",),
        table_types=("cow",),
        shapes=("all",),
        reports_dir=reports,
    )
    with pytest.raises(KeyboardInterrupt):
        Runner(options, InterruptAfter(after)).run()
    return only_run(reports)


def quiet_run(
    reports: Path,
    engines: tuple[str, ...],
    pattern: str,
    progress: Progress | None = None,
    shapes: tuple[str, ...] = ("all",),
) -> tuple[Path, list[Cell]]:
    """Run `pattern` with `engines` on both table types, silently, reading `shapes` (by
    default `SELECT *` only): (run folder, cells)."""
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=engines,
        formats=("hudi",),
        shapes=shapes,
        reports_dir=reports,
        keep_tables=True,  # some tests look at the written files
    )
    result = Runner(options, progress or Progress(quiet=True)).run()
    return result.run_dir, result.cells


def _run_and_say_where(options: RunOptions, conn: Any) -> None:
    """A child process's run (see `ChildRun`): its run folder, or its error, goes to `conn`."""
    try:
        result = Runner(options, Progress(quiet=True)).run()
        conn.send(("done", str(result.run_dir)))
    except BaseException as exc:  # noqa: BLE001 - the parent raises it
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class ChildRun:
    """A run in a process of its own, started now, so that a test module can read with one set
    of engines while another run goes on beside it; `cells()` waits for it."""

    def __init__(self, options: RunOptions) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_run_and_say_where, args=(options, child), name="lakecompat-test-run"
        )
        self._process.start()
        child.close()

    def cells(self, timeout: float = 1200) -> tuple[Path, list[Cell]]:
        """(run folder, cells) once the run has finished; fails with the run's error."""
        from lakecompat.harness.results.store import load_cells

        assert self._conn.poll(timeout), f"the run beside did not finish in {timeout} s"
        status, said = self._conn.recv()
        self._process.join(60)
        assert status == "done", said
        _, cells = load_cells(Path(said))
        return Path(said), cells

    def stop(self) -> None:
        """End the run if it is still going (a failing test must not leave it behind)."""
        if self._process.is_alive():
            os.kill(self._process.pid, signal.SIGINT)  # a Ctrl-C: the run stops its engines
            self._process.join(60)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(10)


def descendants(root: int) -> set[int]:
    """PIDs of every live process below `root` in the process tree."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(proc.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def listening_sockets(pids: set[int]) -> list[tuple[int, str]]:
    """(pid, local address) of every TCP socket in LISTEN state that one of `pids` holds.

    Addresses are decoded from /proc/net/tcp and tcp6: `127.0.0.1:port`, `[::1]:port`,
    `0.0.0.0:port` (every interface) and so on.
    """
    listening: dict[str, str] = {}
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                listening[fields[9]] = _address(fields[1])
    held = []
    for pid in pids:
        for link in _fd_targets(pid):
            inode = link.removeprefix("socket:[").removesuffix("]")
            if link.startswith("socket:[") and inode in listening:
                held.append((pid, listening[inode]))
    return sorted(held)


def _fd_targets(pid: int) -> list[str]:
    """What the open file descriptors of `pid` point to. A busy process opens and closes
    files while we look: a descriptor that is gone by the time it is read is skipped."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # the process has ended
        return []
    targets = []
    for fd in fds:
        try:
            targets.append(os.readlink(fd))
        except OSError:
            continue
    return targets


def _address(hex_address: str) -> str:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        ip = socket.inet_ntop(socket.AF_INET, raw[::-1])
        return f"{ip}:{int(port, 16)}"
    # IPv6: four little-endian 32-bit words.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return f"[{socket.inet_ntop(socket.AF_INET6, words)}]:{int(port, 16)}"


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    return host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1")


class SocketWatch(Progress):
    """Silent progress that records the listening sockets of this process's children while
    cells are being read (every engine is up by then)."""

    def __init__(self) -> None:
        super().__init__(quiet=True)
        self.sockets: list[tuple[int, str]] = []
        self.commands: dict[int, str] = {}

    def cell(self, cell: Cell, judged: Judged | None = None) -> None:
        if not self.sockets:
            pids = descendants(os.getpid()) | {os.getpid()}
            self.sockets = listening_sockets(pids)
            for pid, _ in self.sockets:
                try:
                    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                self.commands[pid] = raw.replace(b"\0", b" ").decode()


def headless_chromium() -> Any:
    """A Selenium driver for the machine's headless Chromium (`make browser` installs it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_path, "run `make browser` (Debian chromium, chromium-driver)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1600"):
        options.add_argument(argument)
    # Chromium leaves its singleton socket's folder in TMPDIR: one of the browser's own,
    # deleted when the test quits the driver, keeps it out of the machine's /tmp.
    scratch = Path(tempfile.mkdtemp(prefix="lakecompat-chromium-"))
    service = Service(executable_path=driver_path, env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(options=options, service=service)
    quit_driver = driver.quit

    def quit_and_clean() -> None:
        try:
            quit_driver()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    driver.quit = quit_and_clean
    return driver


def process_of(marker: str) -> int:
    """The one live child process of this test whose command line contains `marker`."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command and "/bin/sh" not in command.split(" ", 1)[0]:
            found.append(pid)
    assert len(found) == 1, (marker, found)
    return found[0]


class SignalAfter(Progress):
    """Silent progress that sends `sig` to the process `marker` after `cells` cells."""

    def __init__(self, marker: str, sig: int, cells: int) -> None:
        super().__init__(quiet=True)
        self.marker, self.sig, self.left = marker, sig, cells
        self.victim: int | None = None

    def cell(self, cell: Cell, judged: Judged | None = None) -> None:
        self.left -= 1
        if self.left == 0:
            self.victim = process_of(self.marker)
            os.kill(self.victim, self.sig)
            if self.sig == signal.SIGKILL:
                gone(self.victim)  # the crash is over before the run goes on


def gone(pid: int, timeout: float = 30) -> None:
    """Wait until `pid` has exited (no process, or a zombie waiting to be reaped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still runs {timeout} s after SIGKILL")


def overview_failures_not_about_their_operation(run_dir: Path) -> list[str]:
    """Every failure an overview row of the run shows that is not about its operation: each
    failing summary must stand on at least one default-variant `SELECT *` cell that fails
    otherwise than its baseline cell and has something to read. Also every engine without a
    column must have no passing cell. An empty list: the overview tells the truth."""
    from lakecompat.harness.report.overview import NOT_READ, overviews
    from lakecompat.harness.results.causes import same_failure
    from lakecompat.harness.results.expectations import judge, load_expectations
    from lakecompat.harness.results.outcomes import NOTHING_TO_READ

    info, cells = load_run(run_dir)
    judged = judge(cells, load_expectations(ROOT / "expectations"))
    baseline: dict[tuple[str, ...], list[Cell]] = {}
    for c in cells:
        if c.category == "baseline":
            key = (c.format, c.engine, c.table_type, c.query_type, c.variant)
            baseline.setdefault(key, []).append(c)
    found = []
    for overview in overviews(info, judged):
        summaries = [
            (row.scenario, engine, summary)
            for row in overview.rows
            for engine, summary in row.engines.items()
        ]
        summaries += [
            (f"type_change/{a}_to_{b}", engine, summary)
            for engine, grid in overview.grids.items()
            for (a, b), summary in grid.items()
        ]
        for scenario, engine, summary in summaries:
            if summary.outcome in (None, Outcome.PASS):
                continue
            default = overview.defaults[engine]
            own = [
                c
                for c in (judged[i].cell for i in summary.cells)
                if c.variant == default
                and c.shape == "all"
                and c.outcome not in NOT_READ
                and c.outcome is not Outcome.PASS
                and not c.reason.startswith(NOTHING_TO_READ)
                and not any(
                    same_failure(c, b)
                    for b in baseline.get(
                        (c.format, c.engine, c.table_type, c.query_type, c.variant), []
                    )
                )
            ]
            if not own:
                found.append(f"{overview.format} {scenario} {engine}: {summary.text}")
        for aside in overview.asides:
            if aside.kind == "unreadable":
                passing = [i for i in aside.cells if judged[i].cell.outcome is Outcome.PASS]
                if passing:
                    found.append(f"{overview.format} {aside.engine} has no column but passes")
    return found
