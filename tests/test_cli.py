"""The command line: help, validation errors before anything starts, and one real run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import SHARED_ENGINES, SharedRun

from lakecompat.harness.cli import COMMANDS, main
from lakecompat.harness.results.outcomes import Outcome, summary_line
from lakecompat.harness.run.options import DEFAULT_ENGINES

BAD_STEP = """\
title: bad
key: id
formats: {hudi: {ordering: ts}}
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


def help_page(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["", *(c.name for c in COMMANDS)])
def test_every_help_page_that_names_hudi_names_iceberg_too(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    text = help_page(capsys, *filter(None, [command]))
    if re.search(r"\bHudi\b", text):
        assert "Iceberg" in text, command


def test_the_help_of_the_overview_and_of_the_commands_about_tables_names_both_formats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "writes Apache Hudi and Apache Iceberg tables" in " ".join(help_page(capsys).split())
    for command in ("run", "scenarios", "known", "repro", "explore"):
        text = help_page(capsys, command)
        assert "Hudi" in text and "Iceberg" in text, command


@pytest.mark.parametrize("command", ["", *(c.name for c in COMMANDS if c.name != "qualify")])
def test_help_pages_fit_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    lines = help_page(capsys, *filter(None, [command])).splitlines()
    # The exit codes are laid out by hand, a little wider than argparse's own lines.
    assert max(len(line) for line in lines) <= 92, command


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
            ["--engines", "spark,zz"],
            "unknown engine 'zz'; known engines: daft, deltalake, duckdb, flink, hive, hudi-rs, "
            "polars, presto, pyiceberg, spark, trino",
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


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["run", "--set", "foo"],
            "lakecompat run: --set foo: expected ENGINE:KEY=VALUE, e.g. "
            "spark:spark.sql.parquet.enableVectorizedReader=false (keys and values may use "
            "letters, digits and . _ - , : /)",
        ),
        (
            ["run", "--query-timeout", "-5"],
            "lakecompat run: --query-timeout -5: expected a number of seconds from 0 to 86400",
        ),
        (
            ["run", "--variants", "most"],
            "lakecompat run: --variants most: expected one of: all, default",
        ),
        (["explore", "--seed", "x1"], "lakecompat explore: --seed x1: expected a whole number"),
        (
            ["explore", "--budget", "5 x"],
            "lakecompat explore: --budget '5 x': expected a duration like 20m, 90s or 1h",
        ),
        (
            ["run", "--set"],
            "lakecompat run: argument --set: expected one argument "
            "(`lakecompat run --help` lists the options)",
        ),
        (
            ["scenarios", "--colour"],
            "lakecompat scenarios: unrecognized arguments: --colour "
            "(`lakecompat scenarios --help` lists the options)",
        ),
    ],
    ids=["set", "query-timeout", "variants", "seed", "budget", "no-value", "unknown-option"],
)
def test_a_bad_option_is_one_line_without_the_usage(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_report_of_a_folder_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no results.jsonl" in capsys.readouterr().err


@pytest.mark.integration
def test_the_console_script_runs_a_matrix_and_prints_what_failed(shared_run: SharedRun) -> None:
    # The session's shared run is `lakecompat run --scenarios ...` in a project folder, with
    # the default engines and no terminal (tests/conftest.py).
    assert SHARED_ENGINES == DEFAULT_ENGINES
    cells = shared_run.cells
    assert shared_run.returncode == 0, shared_run.stderr[-3000:]
    assert {c.engine for c in cells} == set(DEFAULT_ENGINES)
    # Daft's reader refuses Hudi 1.x tables (a known ERROR), so something fails.
    failing = [c for c in cells if c.outcome in (Outcome.WRONG, Outcome.ERROR)]
    assert any(c.engine == "daft" and c.outcome is Outcome.ERROR for c in failing)
    # Its own folder's report, not latest/: the run is narrowed (--scenarios, --formats).
    document = json.loads((shared_run.run_dir / "results.json").read_text())
    known = [
        c
        for c in document["cells"]
        # a refusal the known outcomes expect is said by the totals, not a known failure
        if c["verdict"] == "as expected" and c["outcome"] not in ("PASS", "UNSUPPORTED", "REJECTED")
    ]
    fixed = sum(c["verdict"] == "fixed upstream" for c in document["cells"])
    assert len(known) >= len(failing)
    # Not on a terminal: every cell failed as known, so no cell has a line of its own; the
    # count lines and the last lines count them.
    for cell in failing:
        query = cell.query_type if cell.shape == "all" else f"{cell.query_type} {cell.shape}"
        assert f"{cell.scenario} · {cell.engine} {cell.table_type} {query}" not in shared_run.stderr
    assert "REGRESSION" not in shared_run.stderr
    assert shared_run.stderr.count("] FIXED UPSTREAM PASS ") == fixed
    total = len(cells)
    verdicts = f"0 regressions, {fixed} fixed upstream, {len(known)} known failures"
    assert f"[{total}/{total}] so far: {summary_line(cells)} · {verdicts}" in shared_run.stderr
    run = f"reports/runs/{shared_run.run_dir.name}"
    assert shared_run.stdout.splitlines()[-3:] == [
        f"against the known outcomes: {verdicts}",
        f"report: {run}/matrix.html (and matrix.md, summary.md)",
        "reports/latest/ was not updated: a narrowed run (--scenarios, --formats); "
        "reports/latest/ keeps the last full run",
    ]
    assert summary_line(cells) in shared_run.stdout
    assert not (shared_run.project / "reports" / "latest").exists()
    assert document["schema_version"] == 4
    assert document["totals"]["verdicts"]["regression"] == 0
    assert len(document["cells"]) == total
