"""Integration: engines that crash (`kill -9`) or hang (SIGSTOP) in the middle of a run.

Each test kills or freezes one real process after a few cells. The run must go on: the
query that met a dead engine is asked again once it is restarted, a hung query's cell is ERROR
with the reason and the engine log, every restart is recorded in events.jsonl, later cells are
read correctly again, and no process is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support import SCENARIOS, SCRIPT, SignalAfter, descendants, processes_mentioning

from lakecompat.engines.hive.reader import HiveEngine
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
PATTERN = "type_change/int_to_long"  # and the baseline: two tables
#: How each process shows in its command line.
SPARK, METASTORE, HIVESERVER2, TRINO = (
    "org.apache.spark.deploy.SparkSubmit",
    "org.apache.hadoop.hive.metastore.HiveMetaStore",
    "org.apache.hive.service.server.HiveServer2",
    "lakecompat.TrinoMain",
)


def faulty_run(
    reports: Path, engines: tuple[str, ...], progress: Progress, **options: float
) -> tuple[Path, list[Cell]]:
    run = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=PATTERN,
        engines=engines,
        formats=("hudi",),
        table_types=("cow",),
        reports_dir=reports,
        query_timeout=options.get("query_timeout", 120),
        step_timeout=options.get("step_timeout", 600),
    )
    result = Runner(run, progress).run()
    return result.run_dir, result.cells


def restarts(run_dir: Path) -> list[dict[str, str]]:
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if json.loads(line)["event"] == "restart"]


def check_recovered(run_dir: Path, cells: list[Cell], engine: str, variants: int) -> list[Cell]:
    """Every planned cell is there, the engine restarted once, the last table reads right
    again, nothing is left running. Returns the ERROR cells."""
    assert len(cells) == 2 * 3 * variants  # 2 tables (cow), 3 query types
    assert [e["engine"] for e in restarts(run_dir)] == [engine]
    last_table = [c for c in cells if c.scenario == "type_change/int_to_long"]
    assert all(c.outcome in (Outcome.PASS, Outcome.UNSUPPORTED) for c in last_table), [
        c.reason for c in last_table
    ]
    assert processes_mentioning(str(run_dir)) == []
    return [c for c in cells if c.outcome is Outcome.ERROR]


@pytest.mark.parametrize(
    ("engines", "marker", "variants"),
    [
        (("spark",), SPARK, 2),
        (("hive",), HIVESERVER2, len(HiveEngine.reading("hudi").variants)),
        (("hive",), METASTORE, len(HiveEngine.reading("hudi").variants)),
        (("trino",), TRINO, 3),
    ],
    ids=["spark-jvm", "hiveserver2", "metastore", "trino"],
)
def test_kill_9_mid_run_restarts_the_engine_and_the_run_completes(
    engines: tuple[str, ...], marker: str, variants: int, tmp_path: Path
) -> None:
    progress = SignalAfter(marker, signal.SIGKILL, cells=2)
    run_dir, cells = faulty_run(tmp_path, engines, progress)
    errors = check_recovered(run_dir, cells, engines[0], variants)
    assert progress.victim is not None
    # The query that met the dead process was asked again on the restarted engine, and read.
    assert errors == [], [c.reason for c in errors]
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    asked = [e for e in map(json.loads, lines) if e["event"] == "asked_again"]
    assert len(asked) == 1 and "died during the query" in asked[0]["why"], asked


def test_a_hung_engine_times_out_and_is_restarted(tmp_path: Path) -> None:
    progress = SignalAfter(HIVESERVER2, signal.SIGSTOP, cells=2)
    # The frozen HiveServer2 never answers; every other read (a few seconds at most, on a
    # freshly restarted and busy machine too) stays far below the timeout.
    run_dir, cells = faulty_run(tmp_path, ("hive",), progress, query_timeout=20)
    errors = check_recovered(run_dir, cells, "hive", len(HiveEngine.reading("hudi").variants))
    assert [c.reason for c in errors] == ["timeout after 20 s"]
    assert 20 <= errors[0].seconds < 60  # ended by the timeout, not by anything later
    assert errors[0].evidence.log


def test_a_writer_step_that_runs_too_long_is_an_error_not_a_rejection(tmp_path: Path) -> None:
    run = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern="rename_column/rename",
        engines=("spark",),
        formats=("hudi",),
        table_types=("cow",),
        reports_dir=tmp_path,
        step_timeout=0.5,  # no Hudi write finishes this fast
        table_cache=None,  # the table must really be written
    )
    result = Runner(run, Progress(quiet=True)).run()
    assert result.cells and all(c.outcome is Outcome.ERROR for c in result.cells)
    assert all("timeout after 0.5 s" in c.reason for c in result.cells)
    assert processes_mentioning(str(result.run_dir)) == []


def test_a_frozen_trino_that_fails_the_query_itself_is_restarted(tmp_path: Path) -> None:
    # Trino's client gives up on its own (an HTTP timeout) before the watchdog would fire;
    # the engine still counts as hung because it no longer answers /v1/info.
    progress = SignalAfter(TRINO, signal.SIGSTOP, cells=2)
    run_dir, cells = faulty_run(tmp_path, ("trino",), progress, query_timeout=300)
    errors = check_recovered(run_dir, cells, "trino", 3)
    assert len(errors) == 1 and "trino stopped answering" in errors[0].reason


def test_kill_9_of_the_run_itself_leaves_none_of_its_processes(tmp_path: Path) -> None:
    """`kill -9` of `lakecompat run`: the run stops nothing, its reaper ends its services
    (Trino, a library's worker), and its Spark ends with it."""
    log = tmp_path / "run.log"
    options = ("--formats", "hudi", "--table-types", "cow", "--reports", str(tmp_path / "r"))
    with open(log, "w") as out:
        run = subprocess.Popen(
            [SCRIPT, "run", "--scenarios", PATTERN, "--engines", "trino,hudi-rs", *options],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    started: set[int] = set()
    commands: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 900
        while not (
            any(TRINO in c for c in commands.values())
            and any("worker.py" in c for c in commands.values())
        ):
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
            started = descendants(run.pid)
            commands = {pid: _command(pid) for pid in started}
        os.kill(run.pid, signal.SIGKILL)
        run.wait(30)
        deadline = time.monotonic() + 60
        while (left := [p for p in started if _running(p)]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == [], {pid: commands[pid] for pid in left}
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for pid in started:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
