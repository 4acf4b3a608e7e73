"""Integration: interrupted runs stop every service, keep their cells and can be completed;
the same run twice gives the same matrix."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support import (
    SCENARIOS,
    InterruptAfter,
    comparable,
    interrupted_run,
    processes_mentioning,
)

from lakecompat.engines.releases import Releases
from lakecompat.harness.cli import main
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.folder import resume_options
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
PATTERN = "rename_column/rename,type_change/int_to_long"
SCRIPT = Path(sys.executable).parent / "lakecompat"


def spark_run(reports: Path, engines: tuple[str, ...] = ("spark",)) -> tuple[Path, list[Cell]]:
    options = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=PATTERN,
        engines=engines,
        formats=("hudi",),
        table_types=("cow",),
        reports_dir=reports,
    )
    result = Runner(options, Progress(quiet=True)).run()
    return result.run_dir, result.cells


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A complete run of Spark alone: its folder, and its cells as `comparable` gives them."""
    run_dir, cells = spark_run(tmp_path_factory.mktemp("reference"))
    return run_dir, comparable(cells, run_dir)


@pytest.fixture(scope="module")
def reference(reference_run: tuple[Path, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return reference_run[1]


@pytest.fixture(scope="module")
def reference_with_hudi_rs(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """hudi-rs reads on a thread of its own, in a worker process, while Spark writes."""
    run_dir, cells = spark_run(tmp_path_factory.mktemp("reference"), ("spark", "hudi-rs"))
    return comparable(cells, run_dir)


def test_the_same_run_twice_gives_the_same_matrix(
    reference_run: tuple[Path, list[dict[str, Any]]],
    reference_with_hudi_rs: list[dict[str, Any]],
) -> None:
    """Two runs of the same tables: Spark's cells of the run with hudi-rs beside it are those
    of the run of Spark alone, cell for cell and in the same order."""
    run_dir, reference = reference_run
    assert [c for c in reference_with_hudi_rs if c["engine"] == "spark"] == reference
    assert {c["engine"] for c in reference_with_hudi_rs} == {"spark", "hudi-rs"}
    assert len(reference) == 3 * 3 * 2  # baseline + 2 scenarios, 3 query types, 2 variants
    # A completed run keeps what the reports need and deletes the tables and scratch data.
    kept = {p.name for p in run_dir.iterdir()}
    assert {"results.jsonl", "run.json", "matrix.html", "results.json", "logs"} <= kept
    assert not {"tables", "spark", "warehouse"} & kept


def test_interrupt_then_resume_equals_an_uninterrupted_run(
    reference: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = interrupted_run(tmp_path, "spark", PATTERN, after=8)
    _, kept = load_run(run_dir)
    assert len(kept) == 8
    assert processes_mentioning(str(run_dir)) == []
    # Its reports are rendered in its own folder; latest/ receives finished runs only.
    assert (run_dir / "matrix.md").is_file()
    assert not (tmp_path / "latest").exists()
    code = main(["run", "--resume", str(run_dir), "--reports", str(tmp_path), "--quiet"])
    _, cells = load_run(run_dir)
    assert comparable(cells, run_dir) == reference
    # The first 8 lines were not rewritten: only the missing cells ran.
    assert [c.to_dict() for c in cells[:8]] == [c.to_dict() for c in kept]
    # Judged without known outcomes: Spark's WRONG cell (schema-on-read off) is a regression.
    assert code == 1
    out = capsys.readouterr().out
    assert "against the known outcomes: 1 regression, 0 fixed upstream, 0 known failures" in out
    # A narrowed run (Spark alone, two scenarios): latest/ stays the last full run's.
    assert "latest/ was not updated: a narrowed run (--scenarios, --formats, --engines, " in out
    assert not (tmp_path / "latest").exists()
    info, _ = load_run(run_dir)
    assert len(info["resumed"]) == 1


def test_sigterm_stops_every_service_and_the_run_resumes(
    reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    command = [str(SCRIPT), "run", "--engines", "spark", "--scenarios", PATTERN, "--shapes", "all"]
    command += ["--formats", "hudi", "--table-types", "cow", "--reports", str(reports), "--quiet"]
    process = subprocess.Popen(command, cwd=tmp_path, stdin=subprocess.DEVNULL, env={**os.environ})
    results = None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        found = list(reports.glob("runs/*/results.jsonl"))
        if found and found[0].read_text().count("\n") >= 4:
            results = found[0]
            break
        time.sleep(0.2)
    assert results is not None, "the run never wrote 4 cells"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 130
    run_dir = results.parent
    assert processes_mentioning(str(run_dir)) == []
    resume = [str(SCRIPT), "run", "--resume", str(run_dir), "--reports", str(reports)]
    assert completes(resume, tmp_path, run_dir) == reference


def test_ctrl_c_stops_the_run_and_the_command_it_prints_completes_it(
    reference_with_hudi_rs: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Ctrl-C in a terminal is a SIGINT to the whole process group, children included: the
    writer's Spark in the middle of its jobs and the worker hudi-rs reads in."""
    reference = reference_with_hudi_rs
    reports = tmp_path / "reports"
    command = [str(SCRIPT), "run", "--engines", "spark,hudi-rs", "--scenarios", PATTERN]
    command += ["--shapes", "all"]
    # Written afresh, so that the signal meets the writer's Spark jobs.
    command += ["--formats", "hudi", "--table-types", "cow", "--reports", str(reports)]
    command += ["--no-table-cache"]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    readers = [
        threading.Thread(target=lines.extend, args=(stream,))
        for stream in (process.stdout, process.stderr)
    ]
    for reader in readers:
        reader.start()
    # A scenario's write after the baseline's cells: Spark is running the writer's jobs.
    writing = f"writing {PATTERN.split(',')[0]} (cow)"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        if any(writing in line for line in lines):
            break
        time.sleep(0.1)
    assert any(writing in line for line in lines), "".join(lines)[-3000:]
    time.sleep(1.5)  # into the write's Spark jobs
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=120) == 130, "".join(lines)[-3000:]
    for reader in readers:
        reader.join(timeout=30)
    assert _group_members(process.pid) == []
    (run_dir,) = (reports / "runs").iterdir()
    assert processes_mentioning(str(run_dir)) == []
    # No cell was recorded from the write or read that the interrupt broke.
    kept = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    broken = [c for c in kept if c["outcome"] == "ERROR"]
    assert broken == [], broken
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "interrupted"
    assert not (reports / "latest").exists()  # a part of a run is never the latest run
    text = "".join(lines)
    assert f"{len(kept)} finished cells are kept in reports/runs/{run_dir.name}." in text
    # No make form: the run did not start in the project's folder, where the Makefile is.
    assert "make matrix" not in text
    (resume,) = [line for line in lines if line.startswith("Complete the run with: ")]
    pasted = shlex.split(resume.removeprefix("Complete the run with: "))
    # The program as the user can type it: its name where PATH finds it (an activated
    # virtual environment), else its path.
    on_path = shutil.which("lakecompat")
    program = "lakecompat" if on_path and Path(on_path).resolve() == SCRIPT.resolve() else SCRIPT
    assert pasted == [str(program), "run", "--resume", f"reports/runs/{run_dir.name}"]
    assert completes(pasted, tmp_path, run_dir) == reference
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"


def completes(command: list[str], cwd: Path, run_dir: Path) -> object:
    """Run `command` (a resume) quietly in `cwd`; the cells of `run_dir` it leaves, comparable."""
    done = subprocess.run(
        [*command, "--quiet"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    _, cells = load_run(run_dir)
    return comparable(cells, run_dir)


def _group_members(pgid: int) -> list[int]:
    """PIDs of live processes in process group `pgid`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(proc.name))
    return found


def test_a_resumed_run_reads_with_the_releases_it_started_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run started on another engine release (PyIceberg 0.11.1 here) is completed with that
    release from a shell that names none: no cell of another release joins it."""
    monkeypatch.delenv("LAKECOMPAT_PYICEBERG_VERSION", raising=False)
    options = RunOptions(
        releases=Releases(engines={"pyiceberg": "0.11.1"}),
        scenarios_dir=SCENARIOS,
        pattern="rename_column/rename",
        engines=("pyiceberg",),
        formats=("iceberg",),
        table_types=("cow",),
        shapes=("all",),
        reports_dir=tmp_path,
    )
    with pytest.raises(KeyboardInterrupt):
        Runner(options, InterruptAfter(3)).run()
    (run_dir,) = (tmp_path / "runs").iterdir()
    main(["run", "--resume", str(run_dir), "--reports", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert "LAKECOMPAT_PYICEBERG_VERSION=0.11.1 (here: 0.12.0)" in out
    info, cells = load_run(run_dir)
    assert info["status"] == "complete" and info["engines"] == {"pyiceberg": "0.11.1"}
    assert len(cells) > 3
    assert {c.engine_version for c in cells} == {"0.11.1"}
    assert "LAKECOMPAT_PYICEBERG_VERSION" not in os.environ


def test_a_run_folder_without_run_info_cannot_be_resumed(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("")
    with pytest.raises(ValueError, match="nothing to resume"):
        resume_options(tmp_path, SCENARIOS, tmp_path)
