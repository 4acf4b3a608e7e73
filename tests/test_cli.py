"""The command line: help, validation errors before anything starts, and one real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

BAD_STEP = """\
title: bad
key: id
precombine: ts
schema: [{name: id, type: int}, {name: ts, type: long}]
rows: [{id: 1, ts: 1}]
steps:
  - op: rename_column
    column: nope
    to: other
"""


def test_help_explains_outcomes_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for word in ("PASS", "WRONG", "REJECTED", "ENGINE_FAILED", "exit codes", "run", "report"):
        assert word in text


def test_scenarios_lists_the_default_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert "baseline/no_change" in out and "all valid" in out


def test_bad_scenario_stops_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken").mkdir()
    bad = tmp_path / "broken" / "rename.yaml"
    bad.write_text(BAD_STEP)
    code = main(["run", "--scenario-dir", str(tmp_path), "--reports", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert str(bad) in err and "steps[0]" in err and "nope" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--engines", "spark,presto"],
            "unknown engine 'presto'; known engines: daft, flink, hive, hudi-rs, spark, trino",
        ),
        (["--table-types", "cow,xyz"], "unknown table type 'xyz'"),
        (["--scenarios", "nothing/*"], "no scenario matches"),
    ],
)
def test_bad_arguments_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["run", "--reports", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_report_of_a_folder_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no results.jsonl" in capsys.readouterr().err


@pytest.mark.integration
def test_console_script_runs_a_small_matrix(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "lakecompat"
    done = subprocess.run(
        [str(script), "run", "--scenarios", "baseline/*", "--table-types", "cow"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # the default engines: Spark (2 reader variants), Hive (4), Trino (3), hudi-rs (2) and Daft
    # (1), each with the three copy-on-write query types; Hive lacks time travel, Trino and Daft
    # incremental and time travel, and Daft's reader refuses Hudi 1.x tables (a known ERROR)
    assert "23 pass, 0 wrong, 1 error, 0 rejected, 12 unsupported, 0 engine failed" in done.stdout
    # Not on a terminal: a line for each failing read, and the counts at the end.
    assert "[36/36] so far: 23 pass, 0 wrong, 1 error" in done.stderr
    assert "] ERROR         baseline/no_change · daft cow snapshot" in done.stderr
    assert "] PASS" not in done.stderr
    document = json.loads((tmp_path / "reports" / "latest" / "results.json").read_text())
    assert document["schema_version"] == 2
    assert document["totals"]["verdicts"]["regression"] == 0  # the baseline is known to pass
    assert {c["outcome"] for c in document["cells"]} == {"PASS", "UNSUPPORTED", "ERROR"}
    assert {c["engine"] for c in document["cells"]} == {"spark", "hive", "trino", "hudi-rs", "daft"}
