"""Integration: `lakecompat repro` for a WRONG Trino cell and an ERROR Hive cell of a real run.

The command writes the table again, runs the generated writer.py with the project's own
Spark (spark-submit) and compares the two tables, and runs the query of the generated reader
files against the engine. Each must agree with the run: the same table (rows and schema),
the same outcome and reason. It runs as docs/repro-and-explore.md shows it: from the project's
folder, with the run folder (and `--out`) relative to it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import SharedRun, lakecompat

from lakecompat.engines.infra.artifacts import maven_repo
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.repro.reproduce import default_folder
from lakecompat.harness.results.store import load_cells

pytestmark = pytest.mark.integration
SCENARIO = "rename_column/rename"
CELLS = {
    f"trino.cow.snapshot.{SCENARIO}[column_names]": "WRONG",
    f"hive.cow.snapshot.{SCENARIO}[mapreduce]": "ERROR",
}


#: What ISSUE.md must not say to an engine's maintainers: lakecompat's own words.
JARGON = re.compile(r"\bWRONG\b|\b[Cc]ells?\b|[Kk]nown outcome|\b[Oo]racle|\b[Vv]ariants?\b")


@pytest.fixture(scope="module")
def project(shared_run: SharedRun) -> Path:
    """A folder standing for the project's, with one run in `reports/runs/<id>` (the run
    conftest.py shares: its Hive and Trino read the renamed column's copy-on-write table)."""
    return shared_run.project


def empty_fields(issue: str) -> list[str]:
    """The parts of ISSUE.md that say nothing: a section without text, a list item without
    a value (`- Java:`), an empty code span (`` `` ``)."""
    sections = re.split(r"^## ", issue, flags=re.MULTILINE)[1:]
    found = [s.splitlines()[0] for s in sections if not "".join(s.splitlines()[1:]).strip()]
    found += re.findall(r"^\s*- [^:`]+:\s*$", issue, flags=re.MULTILINE)
    prose = re.sub(r"^\s*```.*$", "", issue, flags=re.MULTILINE)  # code fences are no spans
    found += [m.group(0) for m in re.finditer(r"(`+)(.*?)\1", prose) if not m.group(2).strip()]
    return found


@pytest.mark.parametrize(("cell_id", "outcome"), CELLS.items())
def test_a_failing_cell_is_reproduced_without_lakecompat(
    project: Path, cell_id: str, outcome: str
) -> None:
    (run_id,) = (path.name for path in (project / "reports" / "runs").iterdir())
    # as docs/repro-and-explore.md and the HTML report write it
    run_dir = Path("reports", "runs", run_id)
    cells = {case_id(c): c for c in load_cells(project / run_dir)[1]}
    assert cells[cell_id].outcome.value == outcome
    # The default folder for one cell, a relative --out for the other.
    options = () if outcome == "WRONG" else ("--out", "repro-hive")
    done = lakecompat("repro", run_dir, cell_id, *options, "--quiet", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    out = project / (options[1] if options else default_folder(run_dir, cell_id))
    record = json.loads((out / "repro.json").read_text())
    # writer.py, run with spark-submit, made the table lakecompat's writer made: both tables
    # were read (with their values: the renamed column is not NULL) and their rows compared.
    assert record["same_table"] is True and record["same_stop"] is None, record["table_check"]
    assert record["table_check"].startswith("writer.py makes the same table: 3 rows")
    ours, theirs = record["compared"]["lakecompat"], record["compared"]["writer.py"]
    assert ours["path"] != theirs["path"] and Path(theirs["path"]).is_relative_to(out / "work")
    assert ours["rows"] == theirs["rows"] == 3 and ours["sha256"] == theirs["sha256"]
    assert "product='apple'" in ours["sample"][0] and ours["sample"] == theirs["sample"]
    # The reader files' query, run against the engine as written, judges as the run did.
    run_cell = cells[cell_id]
    assert record["from_files"] == {"outcome": outcome, "reason": run_cell.reason}
    assert record["again"] == {"outcome": outcome, "reason": run_cell.reason}
    assert record["reproduced"]
    issue = (out / "ISSUE.md").read_text()
    # For the engine's maintainers: every field said, none of lakecompat's words.
    assert empty_fields(issue) == [], issue
    assert JARGON.findall(issue) == [], issue
    assert f"Spark {run_cell.writer['spark']}" in issue
    assert "org.apache.hudi:hudi-spark3.5-bundle_2.12:" + run_cell.writer["hudi"] in issue
    assert f"{run_cell.engine} {run_cell.engine_version}".lower() in issue.splitlines()[0].lower()
    assert re.search(r"^- Reader's Java: Java \d+", issue, flags=re.MULTILINE), issue
    assert record["known"]["outcome"] == outcome
    # An upstream report the known outcome links is cited; without one, none is.
    link = record["known"].get("link")
    assert (f"- Possibly related: {link}" in issue) if link else ("Possibly related" not in issue)
    # writer.py runs offline: its first lines name the bundle in lakecompat's cache.
    bundle = hudi_bundle(run_cell.writer["hudi"]).local_path(maven_repo())
    assert f"--jars {bundle}" in (out / "writer.py").read_text()
    assert (out / "expected.csv").read_text().splitlines()[1:] == [
        "1,apple,1.5,10,100",
        "2,banana,0.25,20,100",
        "3,cherry,4.0,30,100",
    ]
    if outcome == "WRONG":  # Trino: the renamed column reads NULL from the old files
        assert (out / "actual.csv").read_text().splitlines()[1] == "1,,1.5,10,100"
        assert "returns NULL for column `product` where the rows hold 'apple'" in issue
        assert {"reader.sql", "register.hql", "etc/catalog/hudi.properties"} <= set(record["files"])
    else:
        assert run_cell.reason.split(": ", 1)[1] in (out / "actual-error.txt").read_text()
        assert {"reader.hql", "register.hql"} <= set(record["files"])
    assert "/tmp/lakecompat-repro/" in (out / "register.hql").read_text()
    assert not (out / "work" / "script-table").exists()
