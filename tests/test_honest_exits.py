"""Honest exits: a release that does not exist stops the run before anything starts, a run
that did not finish never reads as green, and an interrupted run says how to complete it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import ROOT, SCENARIOS
from test_results_report import INFO, cell, write_run

from lakecompat.harness.cli import main
from lakecompat.harness.results.hints import program
from lakecompat.harness.results.store import ResultsError, load_run
from lakecompat.harness.run import folder as run_folder
from lakecompat.harness.run.folder import resume_options
from lakecompat.harness.run.interrupt import RunInterrupted, holding, watching


@pytest.mark.parametrize(
    ("option", "setting"),
    [
        (["--hudi-version", "9.9.9"], "--hudi-version 9.9.9"),
        (["--hive-hudi-version", "0.0.1"], "--hive-hudi-version 0.0.1"),
    ],
)
def test_a_release_that_does_not_exist_stops_the_run_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], setting: str
) -> None:
    """Maven is asked which releases exist (a real `mvn`: seconds, before any engine)."""
    reports = tmp_path / "reports"
    args = ["run", "--engines", "spark,hive", "--scenarios", "baseline/*", *option]
    assert main([*args, "--reports", str(reports)]) == 2
    error = capsys.readouterr().err
    version = setting.split()[-1]
    assert error.startswith(f"lakecompat: error: {setting}: there is no Hudi release {version} ")
    assert "1.2.0" in error  # the releases that exist are named
    assert error.count("\n") == 1  # one sentence, not Maven's log
    assert not reports.exists()  # no run folder that could read as a run


def test_report_of_a_run_folder_without_cells_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "run", [])
    assert main(["report", str(run_dir)]) == 2
    captured = capsys.readouterr()
    assert f"{run_dir}: the run has no cells" in captured.err
    assert "as expected" not in captured.out + captured.err
    assert not (run_dir / "summary.md").exists()


def test_a_run_that_could_not_start_says_why_and_cannot_be_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "run", [])
    run_folder.record_ending(run_dir, "ServiceError: service 'spark' did not start")
    info, _ = load_run(run_dir)
    assert info["status"] == "failed"
    assert main(["report", str(run_dir)]) == 2
    assert "the run could not start (ServiceError: service 'spark'" in capsys.readouterr().err
    with pytest.raises(ResultsError, match="did not start\\), so there is nothing to resume"):
        resume_options(run_dir, SCENARIOS, tmp_path)


def test_report_of_an_interrupted_run_renders_its_cells_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "run", [cell(), cell(query_type="read_optimized")], INFO)
    run_folder.record_ending(run_dir, run_folder.INTERRUPTED)
    assert main(["report", str(run_dir)]) == 2
    error = capsys.readouterr().err
    assert f"{run_dir}: the run was interrupted after 2 cells; complete it with" in error
    assert f"lakecompat run --resume {run_dir}" in error
    assert (run_dir / "matrix.md").is_file()


def test_report_of_a_run_without_an_ending_says_it_has_not_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = write_run(tmp_path / "run", [cell()], {**INFO, "status": "running"})
    assert main(["report", str(run_dir)]) == 2
    assert "the run has not finished (1 cells so far" in capsys.readouterr().err


def test_report_of_a_complete_run_judges_it(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", [cell()], INFO)
    run_folder.record_ending(run_dir, "")
    assert main(["report", str(run_dir)]) == 0
    info, _ = load_run(run_dir)
    assert info["status"] == "complete" and info["writer"] == INFO["writer"]


def test_the_interrupt_message_names_the_command_to_paste(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / ".venv" / "bin" / "lakecompat"
    monkeypatch.setattr(sys, "argv", [str(script), "run"])
    run_dir = tmp_path / "reports" / "runs" / "20260101-000000"
    message = RunInterrupted([run_dir], 123, Path("reports")).message()
    # No make form here: this folder has no Makefile of the project's.
    assert message.splitlines() == [
        "lakecompat: interrupted; 123 finished cells are kept in reports/runs/20260101-000000.",
        "Complete the run with: .venv/bin/lakecompat run --resume reports/runs/20260101-000000",
    ]
    # Reports elsewhere: the command says where, so that `latest/` lands there again.
    elsewhere = RunInterrupted([tmp_path / "out" / "runs" / "x"], 1, tmp_path / "out").message()
    assert "run --resume out/runs/x --reports out" in elsewhere
    # What stopped the run, when it was not Ctrl-C.
    hung_up = RunInterrupted([run_dir], 1, Path("reports"), "SIGHUP: the terminal closed")
    assert hung_up.message().startswith("lakecompat: interrupted (SIGHUP: the terminal closed); ")


def test_in_the_project_folder_the_message_gives_the_make_form_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [str(ROOT / ".venv" / "bin" / "lakecompat"), "run"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no activated environment
    run_dir = ROOT / "reports" / "runs" / "20260101-000000"
    lines = RunInterrupted([run_dir], 5, Path("reports")).message().splitlines()
    assert lines[1:] == [
        "Complete the run with: .venv/bin/lakecompat run --resume reports/runs/20260101-000000",
        '(with make: make matrix ARGS="--resume reports/runs/20260101-000000")',
    ]


def test_the_program_is_lakecompat_when_started_some_other_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "argv", ["pytest"])
    assert program() == "lakecompat"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_is_noted_the_moment_it_arrives(sig: signal.Signals) -> None:
    # Where the suite itself runs under `nohup`, SIGHUP is ignored and stays so (the test
    # below): this one is about a process that takes it.
    inherited = signal.signal(sig, signal.SIG_DFL) if sig == signal.SIGHUP else None
    try:
        stopped = threading.Event()
        before = signal.getsignal(sig)
        with pytest.raises(KeyboardInterrupt), watching(stopped) as stop:
            os.kill(os.getpid(), sig)
            time.sleep(120)  # the handler interrupts the sleep (at once, however busy)
        assert stopped.is_set()
        assert stop.cause == {signal.SIGINT: "", signal.SIGTERM: "SIGTERM"}.get(
            sig, "SIGHUP: the terminal closed"
        )
        assert signal.getsignal(sig) is before
    finally:
        if inherited is not None:
            signal.signal(sig, inherited)


def test_a_run_started_with_nohup_keeps_running_when_the_terminal_closes() -> None:
    """`nohup` makes SIGHUP ignored: watching the run's stop signals leaves it ignored, so
    closing the terminal does not stop the run."""
    code = (
        "import os, signal, sys, threading, time\n"
        "from lakecompat.harness.run.interrupt import watching\n"
        "with watching(threading.Event()) as stop:\n"
        "    os.kill(os.getpid(), signal.SIGHUP)\n"
        "    time.sleep(0.5)\n"
        "print('still running', stop.cause == '')\n"
    )
    nohup = subprocess.run(
        ["nohup", sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert nohup.stdout.strip() == "still running True", nohup.stderr


def test_kill_int_stops_a_run_a_shell_started_in_the_background() -> None:
    """A non-interactive shell starts a background job with Ctrl-C ignored; `kill -INT` still
    stops the run (only SIGHUP keeps being ignored, for `nohup`)."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt), watching(threading.Event()):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(120)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_signal_after_the_first_or_after_the_last_cell_breaks_nothing_off() -> None:
    """The engines' stop (after the first signal) and a complete run's reports (after every
    cell was measured) are not broken off by another signal: a hung-up terminal's shell sends
    SIGHUP again, and a user may press Ctrl-C twice."""
    stopped = threading.Event()
    wound_up = False
    with pytest.raises(KeyboardInterrupt), watching(stopped):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(120)
        finally:
            os.kill(os.getpid(), signal.SIGHUP)  # while the run stops: ignored
            time.sleep(0.5)
            wound_up = True
    assert wound_up
    with watching(threading.Event()) as stop:
        stop.finished = True
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)
    assert not stop.cause
    with holding():  # the engines stop and the reports are written
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            os.kill(os.getpid(), sig)
        time.sleep(0.5)


def test_qualify_names_a_point_release_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = ["--point", "old:hudi=9.9.9", "--point", "new:hudi=1.2.0"]
    args = ["qualify", *points, "--engines", "spark", "--reports", str(tmp_path / "q")]
    assert main(args) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith(
        "lakecompat: error: version point old: hudi 9.9.9: there is no Hudi release 9.9.9 "
    )
    assert not (tmp_path / "q").exists()  # no qualification record, no point's run folder


def test_an_interrupted_repro_says_its_folder_is_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C during `lakecompat repro` keeps no cells: the message says what to do, not
    how to resume a run."""
    from lakecompat.harness.cli import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("lakecompat.harness.repro.reproduce.reproduce", interrupted)
    out = tmp_path / "repro"
    assert (
        main(["repro", str(tmp_path), "spark.cow.snapshot.x/y[default]", "--out", str(out)]) == 130
    )
    error = capsys.readouterr().err
    assert f"interrupted; the reproduction in {out} is incomplete: run the same command" in error
    assert "--resume" not in error


SECOND_SIGNAL = """
import os, signal, threading, time
from lakecompat.harness.run.interrupt import watching

class SlowEvent(threading.Event):
    # A second Ctrl-C arrives while the first one's handler sets the event (holding its lock).
    fired = False

    def set(self):
        with self._cond:
            if not SlowEvent.fired:
                SlowEvent.fired = True
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.3)
            self._flag = True
            self._cond.notify_all()

try:
    with watching(SlowEvent()):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(60)
except KeyboardInterrupt:
    print("stopped once")
"""


def test_a_second_signal_during_the_first_ones_handling_does_not_hang_the_run() -> None:
    """Two Ctrl-C at once (or a wrapper forwarding its own): the second must not wait on the
    event's lock that the first one's handler holds, which hung the process for good."""
    done = subprocess.run(
        [sys.executable, "-c", SECOND_SIGNAL], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "stopped once", done.stderr
