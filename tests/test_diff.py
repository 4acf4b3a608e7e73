"""`lakecompat diff`: a summary first, then exactly the cells whose outcome changed
(regressions first); cells only one run has and reason-only changes counted, listed on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_report import CELLS, INFO, cell, write_run

from lakecompat.harness.cli import main
from lakecompat.harness.report.render import write_reports
from lakecompat.harness.results.outcomes import Outcome

W, E = Outcome.WRONG, Outcome.ERROR


def runs(tmp_path: Path) -> tuple[Path, Path]:
    """One cell breaks, one changes its version only, one is new."""
    old = write_run(tmp_path / "old", CELLS, INFO)
    changed = [*CELLS]
    changed[0] = cell(outcome=W, reason="NULLs where values were expected in `a`")
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
    assert "- outcome changed: **1** (regressions, PASS before and not now: 1; now PASS: 0" in out
    assert "- only in NEW: 1 (`--absent` lists them)" in out
    rows = [line for line in out.splitlines() if line.startswith("| spark") or "trino" in line]
    assert rows == [
        "| spark | cow | snapshot | add_column/after | default | all | hudi | PASS | WRONG | "
        "NULLs where values were expected in `a` |",
    ]
    assert main(["diff", str(old), str(new), "--absent"]) == 0
    listed = capsys.readouterr().out
    assert (
        "| trino | cow | snapshot | add_column/after | default | all | hudi | (absent) | PASS |  |"
        in listed
    )
    assert "- only in NEW: 1\n" in listed


def subset_pair(tmp_path: Path) -> tuple[Path, Path]:
    """A full run against a run of a subset of its scenarios: many cells only in the full
    run; of the cells both have, one passes now, one breaks and one keeps its outcome with
    another reason."""
    full = [cell(scenario=f"drop_column/s{n}", category="drop_column") for n in range(300)]
    full += [
        cell(scenario="add_column/a", outcome=E, reason="old error"),
        cell(scenario="add_column/b", outcome=W, reason="NULLs in `a`"),
        cell(scenario="add_column/c"),
        cell(scenario="add_column/d"),
    ]
    subset = [
        cell(scenario="add_column/a"),
        cell(scenario="add_column/b", outcome=W, reason="NULLs in `a` and `b`"),
        cell(scenario="add_column/c"),
        cell(scenario="add_column/d", outcome=E, reason="new error"),
    ]
    return write_run(tmp_path / "full", full, INFO), write_run(tmp_path / "subset", subset, INFO)


def test_the_summary_comes_first_and_absent_cells_are_counted_not_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: a full run against a subset printed every absent cell, and the first
    real change was hundreds of lines down. Now the counts come first, then the two outcome
    changes, the regression (PASS before) first, and nothing else."""
    full, subset = subset_pair(tmp_path)
    assert main(["diff", str(full), str(subset)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:7] == [
        "- outcome changed: **2** (regressions, PASS before and not now: 1; now PASS: 1; other: 0)",
        "- same outcome, other reason: 1 (`--reasons` lists them)",
        "- only in NEW: 0",
        "- only in OLD: 300 (`--absent` lists them)",
        "- unchanged: 1",
    ]
    rows = [line for line in lines if line.startswith("| spark")]
    assert [row.split(" | ")[3] for row in rows] == ["add_column/d", "add_column/a"]
    assert "(absent)" not in "\n".join(lines)
    assert len(lines) < 20


def test_reason_only_changes_are_listed_with_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full, subset = subset_pair(tmp_path)
    assert main(["diff", str(full), str(subset), "--reasons"]) == 0
    out = capsys.readouterr().out
    assert "## Same outcome, other reason (1)" in out
    assert (
        "| add_column/b | default | all | hudi | WRONG | WRONG | NULLs in `a` | "
        "NULLs in `a` and `b` |" in out
    )
    assert "- same outcome, other reason: 1\n" in out
    # Two runs that differ in no reason say so in the count.
    assert main(["diff", str(subset), str(subset), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["reason_changed"] == 0 and summary["unchanged"] == 4


def test_json_has_the_summary_and_the_lists_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full, subset = subset_pair(tmp_path)
    assert main(["diff", str(full), str(subset), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["summary"] == {
        "outcome_changed": 2,
        "regressions": 1,
        "now_passing": 1,
        "reason_changed": 1,
        "only_in_new": 0,
        "only_in_old": 300,
        "unchanged": 1,
    }
    changes = document["changes"]
    assert [(c["scenario"], c["change"]) for c in changes] == [
        ("add_column/d", "regression"),
        ("add_column/a", "now passing"),
    ]
    assert changes[0]["old"]["outcome"] == "PASS" and changes[0]["new"]["outcome"] == "ERROR"
    assert "only_in_old" not in document and "reason_changes" not in document
    assert main(["diff", str(full), str(subset), "--json", "--absent", "--reasons"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["only_in_old"]) == 300 and document["only_in_new"] == []
    assert document["only_in_old"][0]["new"] is None
    (reason,) = document["reason_changes"]
    assert reason["change"] == "reason changed"
    assert (reason["old"]["reason"], reason["new"]["reason"]) == (
        "NULLs in `a`",
        "NULLs in `a` and `b`",
    )


def test_reports_folders_and_results_files_work_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = runs(tmp_path)
    write_reports(new, [tmp_path / "latest"])
    assert main(["diff", str(old), str(tmp_path / "latest" / "results.json")]) == 0
    assert "- outcome changed: **1**" in capsys.readouterr().out
    assert main(["diff", str(new), str(tmp_path / "latest")]) == 0
    assert "No cell changed its outcome." in capsys.readouterr().out


def test_a_path_without_results_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, _ = runs(tmp_path)
    assert main(["diff", str(old), str(tmp_path / "nothing")]) == 2
    assert "nothing: neither a run folder" in capsys.readouterr().err


def test_the_help_says_what_is_listed_and_what_is_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["diff", "--help"])
    text = capsys.readouterr().out
    assert "--absent" in text and "--reasons" in text and "regressions first" in text


def test_an_unfinished_run_is_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = runs(tmp_path)
    write_run(new, [], {**INFO, "status": "interrupted"})
    assert main(["diff", str(old), str(new)]) == 0
    err = capsys.readouterr().err
    assert f"lakecompat: note: {new}: the run was interrupted after 7 cells; complete it" in err
