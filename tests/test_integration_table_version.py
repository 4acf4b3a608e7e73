"""Integration: the writer keeps table version 6 when a run asks for it (`--table-version 6`).

Hudi 1.2.0 writes table version 9 by default; with `hoodie.write.table.version=6` (and
auto-upgrade off) every write and statement keeps the table at 6, which Hudi 0.14/0.15 readers
read. The run records the choice in every cell, the file layout says the version the table has
after its steps, and the table cache keeps such tables apart from the default ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS

from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration


def test_a_run_asked_for_table_version_6_writes_and_reads_version_6_tables(
    tmp_path: Path,
) -> None:
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern="rename_column/rename",
        engines=("spark",),
        formats=("hudi",),
        table_types=("cow",),
        shapes=("all",),
        reports_dir=tmp_path / "reports",
        table_cache=tmp_path / "cache",
        keep_tables=True,
        versions={"hudi": "6"},
    )
    result = Runner(options, Progress(quiet=True)).run()
    assert {c.writer.get("table_version") for c in result.cells} == {"6"}
    table = result.run_dir / "tables" / "t_rename_column_rename_cow" / ".hoodie"
    properties = (table / "hoodie.properties").read_text()
    assert "hoodie.table.version=6" in properties.splitlines()
    renamed = [c for c in result.cells if c.scenario == "rename_column/rename"]
    assert renamed[0].evidence.files["notes"][-1] == "table version 6 after the steps"
    assert renamed[0].evidence.files["unmet"] == []
    # Spark with schema-on-read reads the version 6 table right after the rename.
    read = [c for c in renamed if (c.query_type, c.variant) == ("snapshot", "schema_on_read")]
    assert [c.outcome for c in read] == [Outcome.PASS], [c.reason for c in read]
    # The cache keeps the version 6 table apart: a default run writes its own.
    entries = sorted((tmp_path / "cache" / "hudi").glob("rename_column__rename__cow/*"))
    assert len(entries) == 1
    default = Runner(
        RunOptions(**{**options.__dict__, "versions": {}, "reports_dir": tmp_path / "r2"}),
        Progress(quiet=True),
    ).run()
    assert {c.table_from for c in default.cells} == {"written"}
    assert len(sorted((tmp_path / "cache" / "hudi").glob("rename_column__rename__cow/*"))) == 2
