"""`lakecompat diff`: exactly the cells whose outcome changed between two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_report import CELLS, INFO, cell, write_run

from harness.cli import main
from harness.report.render import write_reports
from harness.results.outcomes import Outcome


def runs(tmp_path: Path) -> tuple[Path, Path]:
    old = write_run(tmp_path / "old", CELLS, INFO)
    changed = [*CELLS]
    changed[0] = cell(outcome=Outcome.WRONG, reason="NULLs where values were expected in `a`")
    changed[1] = cell(query_type="read_optimized", engine_version="3.6.0")  # version only
    changed.append(cell(engine="trino", engine_version="483"))
    new = write_run(tmp_path / "new", changed[1:] + changed[:1], INFO)
    return old, new


def test_markdown_lists_exactly_the_changed_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = runs(tmp_path)
    assert main(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "2 cell(s) changed." in out
    rows = [line for line in out.splitlines() if line.startswith("| spark") or "trino" in line]
    assert rows == [
        "| spark | cow | snapshot | add_column/after | default | all | hudi | PASS | WRONG | "
        "NULLs where values were expected in `a` |",
        "| trino | cow | snapshot | add_column/after | default | all | hudi | (absent) | PASS |  |",
    ]


def test_json_names_old_and_new_sides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = runs(tmp_path)
    assert main(["diff", str(old), str(new), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [c["engine"] for c in document["changes"]] == ["spark", "trino"]
    first = document["changes"][0]
    assert first["old"]["outcome"] == "PASS" and first["new"]["outcome"] == "WRONG"
    assert document["changes"][1]["old"] is None


def test_reports_folders_and_results_files_work_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = runs(tmp_path)
    write_reports(new, [tmp_path / "latest"])
    assert main(["diff", str(old), str(tmp_path / "latest" / "results.json")]) == 0
    assert "2 cell(s) changed." in capsys.readouterr().out
    assert main(["diff", str(new), str(tmp_path / "latest")]) == 0
    assert "No cell changed its outcome." in capsys.readouterr().out


def test_a_path_without_results_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, _ = runs(tmp_path)
    assert main(["diff", str(old), str(tmp_path / "nothing")]) == 2
    assert "nothing: neither a run folder" in capsys.readouterr().err
