"""Integration: `lakecompat repro` for a WRONG Trino cell and an ERROR Hive cell of a real run.

The command writes the table again, runs the generated writer.py with the project's own
Spark (spark-submit) and compares the two tables, and runs the query of the generated reader
files against the engine. Each must agree with the run: the same table (rows and schema),
the same outcome and reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_integration_reports import lakecompat

from harness.report.junit import case_id
from harness.results.store import load_cells

pytestmark = pytest.mark.integration
SCENARIO = "rename_column/rename"
CELLS = {
    f"trino.cow.snapshot.{SCENARIO}[column_names]": "WRONG",
    f"hive.cow.snapshot.{SCENARIO}[mapreduce]": "ERROR",
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("repro")
    options = ("--scenarios", SCENARIO, "--table-types", "cow", "--engines", "hive,trino")
    done = lakecompat("run", *options, "--quiet", "--reports", base, cwd=base)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (found,) = (base / "runs").iterdir()
    return found


@pytest.mark.parametrize(("cell_id", "outcome"), CELLS.items())
def test_a_failing_cell_is_reproduced_without_lakecompat(
    run_dir: Path, tmp_path: Path, cell_id: str, outcome: str
) -> None:
    cells = {case_id(c): c for c in load_cells(run_dir)[1]}
    assert cells[cell_id].outcome.value == outcome
    out = tmp_path / "repro"
    done = lakecompat("repro", run_dir, cell_id, "--out", out, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    record = json.loads((out / "repro.json").read_text())
    # writer.py, run with spark-submit, made the table lakecompat's writer made.
    assert record["same_table"], record["table_check"]
    assert record["table_check"].startswith("writer.py makes the same table: 3 rows")
    # The reader files' query, run against the engine as written, judges as the run did.
    run_cell = cells[cell_id]
    assert record["from_files"] == {"outcome": outcome, "reason": run_cell.reason}
    assert record["again"] == {"outcome": outcome, "reason": run_cell.reason}
    assert record["reproduced"]
    issue = (out / "ISSUE.md").read_text()
    assert f"Spark {run_cell.writer['spark']}" in issue
    assert "org.apache.hudi:hudi-spark3.5-bundle_2.12:" + run_cell.writer["hudi"] in issue
    assert f"{run_cell.engine} {run_cell.engine_version}" in issue
    assert record["known"]["outcome"] == outcome and record["known"]["link"] in issue
    assert (out / "expected.csv").read_text().splitlines()[1:] == [
        "1,apple,1.5,10,100",
        "2,banana,0.25,20,100",
        "3,cherry,4.0,30,100",
    ]
    if outcome == "WRONG":  # Trino: the renamed column reads NULL from the old files
        assert (out / "actual.csv").read_text().splitlines()[1] == "1,,1.5,10,100"
        assert {"reader.sql", "register.hql", "etc/catalog/hudi.properties"} <= set(record["files"])
    else:
        assert run_cell.reason.split(": ", 1)[1] in (out / "actual-error.txt").read_text()
        assert {"reader.hql", "register.hql"} <= set(record["files"])
    assert "/tmp/lakecompat-repro/" in (out / "register.hql").read_text()
    assert not (out / "work" / "script-table").exists()
