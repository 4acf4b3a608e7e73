"""Integration: a table created by Hudi 0.15.0 and evolved by the run's Hudi release.

The older release writes from a Spark of its own (a child process); the run's writer takes the
table over at the `upgrade_writer` step and upgrades it on its first change. The table itself
must show both: the initial table version of 0.15.0, the current one of the run's release, and
live files of both releases. The cells are judged like any other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import SharedRun, lakecompat

from lakecompat.harness.results.store import load_cells

pytestmark = pytest.mark.integration
SCENARIO = "writer_upgrade/rename_after_upgrade"


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    reports = tmp_path_factory.mktemp("upgrade")
    done = lakecompat(
        "run",
        "--scenarios",
        SCENARIO,
        "--engines",
        "spark",
        "--formats",
        "hudi",
        "--table-types",
        "mor",
        "--shapes",
        "all",
        "--reports",
        reports,
        "--keep-tables",
        "--quiet",
        # Written afresh: the test is about the older release writing the table's start.
        "--no-table-cache",
        cwd=reports,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.returncode, next((reports / "runs").iterdir())


def test_the_table_was_created_by_the_older_release_and_upgraded(
    upgraded: tuple[int, Path],
) -> None:
    _, run = upgraded
    table = run / "tables" / "t_writer_upgrade_rename_after_upgrade_mor"
    properties = dict(
        line.split("=", 1)
        for line in (table / ".hoodie" / "hoodie.properties").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert properties["hoodie.table.initial.version"] == "6"  # Hudi 0.15.0
    assert int(properties["hoodie.table.version"]) >= 8  # Hudi 1.x
    assert (run / "logs" / "spark-hudi-0.15.0.log").exists()


def test_cells_carry_both_releases_in_their_evidence(upgraded: tuple[int, Path]) -> None:
    code, run = upgraded
    _, every = load_cells(run)
    cells = [c for c in every if c.scenario == SCENARIO]  # the baseline runs too
    assert len(cells) == 8  # 4 query types x 2 variants
    files = cells[0].evidence.files
    assert files is not None and files["unmet"] == []
    assert [g["written_by"] for g in files["groups"]][:2] == [
        "seed rows (Hudi 0.15.0)",
        "steps[0] insert (Hudi 0.15.0)",
    ]
    assert files["notes"][0] == (
        "Hudi 0.15.0 wrote the steps before steps[1] (table version 6); Hudi 1.2.0 wrote the rest"
    )
    assert files["notes"][1].startswith("table version ")
    by_key = {(c.query_type, c.variant): c.outcome.value for c in cells}
    assert by_key[("snapshot", "schema_on_read")] == "PASS"
    # Without schema on read, Spark reads the renamed column by name: NULL in old files.
    assert by_key[("snapshot", "schema_on_read_off")] == "WRONG"
    summary = json.loads((run / "results.json").read_text())
    assert summary["cells"], "the results file holds the cells"
    assert code == 0, "every cell is as the known outcomes say"


def test_a_spark_reader_on_an_older_release_reads_in_a_spark_of_its_own(
    lagging_readers_run: SharedRun,
) -> None:
    """Version skew: the writer on the default release, a Spark job still on Hudi 0.15.0.
    Hudi 0.15.0 cannot read the timeline of a table written by Hudi 1.x, so every cell is
    ERROR, and the reason says where Hudi refused it. (The run conftest.py shares: its Spark
    cells of the copy-on-write baseline.)"""
    run = lagging_readers_run.run_dir
    cells = lagging_readers_run.of(
        engines=("spark",), scenarios=("baseline/no_change",), table_types=("cow",)
    )
    # The known outcomes of the skew points (expectations/skew-readers-hudi-0.15.0.yaml) say
    # so: the run exits 0, these cells as expected, judged by that file's Spark entry.
    assert lagging_readers_run.returncode == 0
    document = json.loads((run / "results.json").read_text())
    judged = [
        c
        for c in document["cells"]
        if (c["engine"], c["scenario"], c["table_type"]) == ("spark", "baseline/no_change", "cow")
    ]
    assert [c["verdict"] for c in judged] == ["as expected"] * 6
    assert all("migration guide" in c["known"]["reason"] for c in judged), judged[0]
    assert len(cells) == 6  # the baseline, 3 query types x 2 variants
    assert {c.reader_hudi for c in cells} == {"0.15.0"}
    assert {c.writer["hudi"] for c in cells} == {"1.2.0"}
    assert {c.outcome.value for c in cells} == {"ERROR"}
    assert all("TimelineLayoutVersion" in c.reason for c in cells), cells[0].reason
    for cell in cells:
        # The child's JVM trace crossed over: the cause chain with Hudi's frames, and the log
        # of the Spark that read; the evidence names the bundle the read ran with.
        assert "\n    at org.apache.hudi." in (cell.evidence.error or ""), cell.evidence.error
        assert (cell.evidence.log or "").startswith("spark-hudi-0.15.0.log")
        assert "hudi-spark3.5-bundle_2.12:0.15.0" in (cell.evidence.sql or "")
    summary = (lagging_readers_run.run_dir / "summary.md").read_text()
    assert re.search(r"\bspark 3\.5\.\d+ with Hudi 0\.15\.0 jars\b", summary), summary
    assert json.loads((run / "run.json").read_text())["spark_hudi"] == "0.15.0"
    assert (run / "logs" / "spark-hudi-0.15.0.log").exists()
