"""Integration: a run stops cleanly however its output is connected, when Ctrl-C reaches a
pipeline (`lakecompat run | tee log`: tee ends too), when its terminal hangs up, and when the
reader of its output goes away. Each time every engine is stopped, every finished cell kept,
`run.json` says "interrupted", the exit code is 130, the command that completes the run is
shown where it can still be seen and written into the run folder, and it completes the run.

The runs are real and small: Spark reading one scenario's copy-on-write table, in a terminal
of their own (a pseudo-terminal that is the run's controlling terminal, as in a user's shell).
"""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support import SCRIPT, comparable, processes_mentioning

from lakecompat.harness.results.store import load_run

pytestmark = pytest.mark.integration
SCENARIOS = "rename_column/rename,type_change/int_to_long"
OPTIONS = ("--engines", "spark", "--formats", "hudi", "--scenarios", SCENARIOS)
OPTIONS += ("--table-types", "cow", "--shapes", "all", "--reports", "reports")
#: The run's cells: the baseline and two scenarios, 3 query types, 2 variants.
CELLS = 18
#: Cells recorded before the run is stopped: early, so that the stop meets the run reading.
BEFORE_STOP = 2


class Terminal:
    """A pseudo-terminal that runs one shell line as its session's leader, as a user's shell
    runs a pipeline; it keeps everything written to it."""

    def __init__(self, line: str, cwd: Path) -> None:
        self.controller, side = pty.openpty()
        # setsid --ctty: a session of its own whose controlling terminal this is; `exec` keeps
        # the process id, so that the exit code is lakecompat's.
        # A user's shell takes hangups, also where the suite itself runs under `nohup`
        # (whose ignored SIGHUP a child would inherit, and rightly keep).
        self.process = subprocess.Popen(
            ["setsid", "--ctty", "bash", "-c", line],
            stdin=side,
            stdout=side,
            stderr=side,
            cwd=cwd,
            env=_environment(),
            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
        )
        os.close(side)
        self.shown = bytearray()
        self._closing = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Never blocked in a read: the terminal hangs up when its last reference is closed,
        # and a read in progress holds one.
        while not self._closing.is_set():
            if not select.select([self.controller], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(self.controller, 65536)
            except OSError:  # EIO: every process of the terminal has ended
                return
            if not chunk:
                return
            self.shown += chunk

    def type(self, keys: bytes) -> None:
        os.write(self.controller, keys)

    def hang_up(self) -> None:
        """Close the terminal, as a closed window or a dropped SSH connection does."""
        self._closing.set()
        self._reader.join(timeout=30)
        os.close(self.controller)

    def text(self) -> str:
        """What the terminal shows: each line as last redrawn (a bar redraws after a CR)."""
        self._reader.join(timeout=30)
        lines = self.shown.decode(errors="replace").replace("\r\n", "\n").split("\n")
        return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


def _environment() -> dict[str, str]:
    """This environment without what would change the message (a make above the tests)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}


def _run_folder_with_cells(project: Path, process: subprocess.Popen[bytes]) -> Path:
    """The run folder once it holds `BEFORE_STOP` cells."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        for results in project.glob("reports/runs/*/results.jsonl"):
            if results.read_text().count("\n") >= BEFORE_STOP:
                return results.parent
        time.sleep(0.2)
    raise AssertionError(f"the run never wrote {BEFORE_STOP} cells (exit {process.poll()})")


def _stopped_cleanly(run_dir: Path, process: subprocess.Popen[bytes]) -> list[dict[str, object]]:
    """Check what every stop must leave; the cells kept."""
    assert process.wait(timeout=300) == 130
    assert processes_mentioning(str(run_dir)) == []  # no JVM (or worker) of the run is left
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted"
    kept = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert BEFORE_STOP <= len(kept) < CELLS, "the run was not stopped while it read"
    # The run folder says how to complete the run, from any folder.
    summary = (run_dir / "summary.md").read_text()
    assert summary.splitlines()[2].startswith("**Interrupted: the run stopped after")
    assert _recorded_resume(run_dir) in summary
    return kept


def _recorded_resume(run_dir: Path) -> str:
    """The command the run folder's reports give: `cd <project> && <script> run --resume`."""
    project = shlex.quote(str(run_dir.parent.parent.parent))
    return f"cd {project} && {SCRIPT} run --resume reports/runs/{run_dir.name}"


def _complete(command: str, cwd: Path, run_dir: Path) -> list[dict[str, object]]:
    """Run a pasted resume command (a shell line) quietly in `cwd`; the run's cells then."""
    done = subprocess.run(
        ["bash", "-c", f"{command} --quiet"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        env=_environment(),
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    info, cells = load_run(run_dir)
    assert info["status"] == "complete"
    return comparable(cells, run_dir)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    """The cells of the same run, not stopped."""
    project = tmp_path_factory.mktemp("reference")
    done = subprocess.run(
        [str(SCRIPT), "run", *OPTIONS, "--quiet"],
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        env=_environment(),
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (run_dir,) = (project / "reports" / "runs").iterdir()
    _, cells = load_run(run_dir)
    assert len(cells) == CELLS
    return comparable(cells, run_dir)


def test_ctrl_c_on_a_run_piped_into_tee(reference: list[dict[str, object]], tmp_path: Path) -> None:
    """`lakecompat run | tee log`, Ctrl-C: tee ends with the run; the message is on stderr,
    the terminal."""
    line = f"exec {SCRIPT} run {' '.join(OPTIONS)} > >(exec tee log)"
    terminal = Terminal(line, tmp_path)
    run_dir = _run_folder_with_cells(tmp_path, terminal.process)
    terminal.type(b"\x03")
    kept = _stopped_cleanly(run_dir, terminal.process)
    shown = terminal.text()
    where = f"reports/runs/{run_dir.name}"
    assert f"lakecompat: interrupted; {len(kept)} finished cells are kept in {where}." in shown
    (resume,) = [x for x in shown.splitlines() if x.startswith("Complete the run with: ")]
    assert _complete(resume.removeprefix("Complete the run with: "), tmp_path, run_dir) == reference


def test_ctrl_c_on_a_run_piped_with_its_errors_into_tee(
    reference: list[dict[str, object]], tmp_path: Path
) -> None:
    """`lakecompat run 2>&1 | tee log`, Ctrl-C: both of its streams are gone with tee, so the
    message goes to the terminal itself."""
    line = f"exec {SCRIPT} run {' '.join(OPTIONS)} > >(exec tee log) 2>&1"
    terminal = Terminal(line, tmp_path)
    run_dir = _run_folder_with_cells(tmp_path, terminal.process)
    terminal.type(b"\x03")
    kept = _stopped_cleanly(run_dir, terminal.process)
    shown = terminal.text()
    assert "Traceback" not in shown
    assert f"{len(kept)} finished cells are kept in reports/runs/{run_dir.name}." in shown
    assert f"Complete the run with: {SCRIPT} run --resume reports/runs/{run_dir.name}" in shown
    # The reports' command works from any folder.
    assert _complete(_recorded_resume(run_dir), Path("/"), run_dir) == reference


def test_a_terminal_that_hangs_up_stops_the_run(
    reference: list[dict[str, object]], tmp_path: Path
) -> None:
    """The terminal closes (SIGHUP, and writes to it fail): nobody sees a message, the run
    folder says how to complete the run."""
    terminal = Terminal(f"exec {SCRIPT} run {' '.join(OPTIONS)}", tmp_path)
    run_dir = _run_folder_with_cells(tmp_path, terminal.process)
    terminal.hang_up()
    _stopped_cleanly(run_dir, terminal.process)
    assert _complete(_recorded_resume(run_dir), tmp_path, run_dir) == reference


def test_a_closed_standard_output_stops_the_run(
    reference: list[dict[str, object]], tmp_path: Path
) -> None:
    """The reader of the run's output goes away (`| head`, a pager quit) while the run has
    nothing to print: the run stops at once, and says so on stderr."""
    process = subprocess.Popen(
        [str(SCRIPT), "run", *OPTIONS],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(),
    )
    assert process.stdout is not None and process.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)
    reader.start()
    run_dir = _run_folder_with_cells(tmp_path, process)
    process.stdout.close()
    kept = _stopped_cleanly(run_dir, process)
    reader.join(timeout=30)
    said = b"".join(errors).decode()
    where = f"reports/runs/{run_dir.name}"
    stopped = f"lakecompat: interrupted (its standard output was closed); {len(kept)} finished"
    assert f"{stopped} cells are kept in {where}." in said
    (resume,) = [x for x in said.splitlines() if x.startswith("Complete the run with: ")]
    assert _complete(resume.removeprefix("Complete the run with: "), tmp_path, run_dir) == reference
