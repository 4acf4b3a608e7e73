"""Integration: real Hudi tables written by Spark, read back by Spark, judged against the oracle."""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest
from support import processes_mentioning, quiet_run

from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import describe_error, error_text, log_size
from lakecompat.engines.spark.reader import SparkEngine
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.harness.cli import main
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.cells import failure_log
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.releases import environment_releases
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
INCREMENTAL_AND_PAST = ("incremental", "time_travel")
PICKED = (
    "add_column/first,rename_column/rename,rename_column/then_upsert,"
    "merge_on_read/rename_then_compaction,type_change/int_to_long"
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Cell]]:
    return quiet_run(tmp_path_factory.mktemp("reports"), ("spark",), PICKED)


def cells_of(cells: list[Cell], scenario: str, variant: str = "schema_on_read") -> list[Cell]:
    return [c for c in cells if c.scenario == scenario and c.variant == variant]


def test_every_planned_cell_is_recorded_with_versions(run: tuple[Path, list[Cell]]) -> None:
    run_dir, cells = run
    # baseline + 4 scenarios on cow and mor (3 + 4 query types) + 1 mor-only, times 2 variants
    assert len(cells) == (5 * 7 + 4) * 2
    _, on_disk = load_run(run_dir)
    assert [c.to_dict() for c in on_disk] == [c.to_dict() for c in cells]
    for cell in cells:
        assert cell.writer == {
            "spark": pyspark.__version__,
            "hudi": environment_releases().format("hudi"),
        }
        assert cell.engine_version == pyspark.__version__
    assert processes_mentioning(str(run_dir)) == []  # the Spark JVM ended with the run


def test_baseline_reads_correctly_everywhere(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    baseline = [c for c in cells if c.scenario == "baseline/no_change"]
    assert {(c.table_type, c.query_type) for c in baseline} == {
        ("cow", "snapshot"),
        ("cow", "incremental"),
        ("cow", "time_travel"),
        ("mor", "snapshot"),
        ("mor", "read_optimized"),
        ("mor", "incremental"),
        ("mor", "time_travel"),
    }
    assert all(c.outcome is Outcome.PASS for c in baseline), [c.reason for c in baseline]


def test_first_position_is_rejected_by_the_writer(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    first = [c for c in cells if c.scenario == "add_column/first"]
    assert first and all(c.outcome is Outcome.REJECTED for c in first)
    assert "first" in first[0].reason.lower()
    assert "FIRST" in (first[0].evidence.sql or "")


def test_rename_reads_null_without_schema_on_read(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    assert all(c.outcome is Outcome.PASS for c in cells_of(cells, "rename_column/rename"))
    off = cells_of(cells, "rename_column/rename", "schema_on_read_off")
    # Incremental reads nothing (no row written after the rename); time travel the old name.
    assert all(c.outcome is Outcome.PASS for c in off if c.query_type in INCREMENTAL_AND_PAST)
    off = [c for c in off if c.query_type not in INCREMENTAL_AND_PAST]
    assert off and all(c.outcome is Outcome.WRONG for c in off)
    assert all("NULLs where values were expected in `product`" in c.reason for c in off)
    sample = off[0].evidence.sample[0]
    assert sample["column"] == "product" and sample["actual"] is None
    assert "SELECT * FROM" in (off[0].evidence.sql or "")


def test_merge_on_read_tables_have_log_files_and_compaction_shows_updates(
    run: tuple[Path, list[Cell]],
) -> None:
    run_dir, cells = run
    tables = run_dir / "tables"
    upserted = tables / "t_rename_column_then_upsert_mor"
    assert (upserted / ".hoodie" / "hoodie.properties").is_file()
    assert any(".log." in p.name for p in upserted.rglob("*") if p.is_file())
    compacted = cells_of(cells, "merge_on_read/rename_then_compaction")
    assert {c.query_type: c.outcome for c in compacted} == {
        "snapshot": Outcome.PASS,
        "read_optimized": Outcome.PASS,
        "incremental": Outcome.PASS,
        "time_travel": Outcome.PASS,
    }


def test_widened_type_reads_as_long(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    widened = cells_of(cells, "type_change/int_to_long")
    assert widened and all(c.outcome is Outcome.PASS for c in widened)


def test_reports_render_again_from_results_alone(
    run: tuple[Path, list[Cell]], tmp_path: Path
) -> None:
    run_dir, _ = run
    # A narrowed run (Spark alone, some scenarios): its reports are in its own folder only.
    assert not (run_dir.parent.parent / "latest").exists()
    # Exit 1: the run was judged without known outcomes, so its non-PASS cells are regressions.
    assert main(["report", str(run_dir), "--out", str(tmp_path)]) == 1
    for name in ("matrix.md", "results.json", "matrix.html", "junit.xml", "summary.md"):
        assert (tmp_path / name).read_text() == (run_dir / name).read_text(), name
    matrix = (run_dir / "matrix.md").read_text()
    assert "## spark" in matrix and "| read_optimized |" in matrix
    assert "REJECTED" in matrix and "Evidence" in matrix


def test_incremental_and_time_travel_start_before_the_change(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    upserted = {c.query_type: c for c in cells_of(cells, "rename_column/then_upsert")}
    incremental = upserted["incremental"]
    assert incremental.outcome is Outcome.PASS, incremental.reason
    assert "hoodie.datasource.read.begin.instanttime" in (incremental.evidence.sql or "")
    past = upserted["time_travel"]
    assert past.outcome is Outcome.PASS, past.reason
    assert "as.of.instant" in (past.evidence.sql or "")


def test_old_and_new_files_are_live_after_an_upsert(run: tuple[Path, list[Cell]]) -> None:
    """Copy-on-write: the upsert rewrites only the file group of the key it updates."""
    _, cells = run
    (cell, *_) = [c for c in cells if c.scenario == "rename_column/then_upsert"]
    files = cell.evidence.files
    assert files is not None and files["unmet"] == []
    assert [(g["written_by"], g["when"], g["base"], g["log"]) for g in files["groups"]] == [
        ("seed rows", "before the schema change", 2, 0),
        ("steps[1] upsert", "after the schema change", 2, 0),
    ]
    assert "name string" in files["groups"][0]["columns"]
    assert "product string" in files["groups"][1]["columns"]


REWRITES_EVERYTHING = """\
title: Change a type, then upsert every row
key: id
formats: {hudi: {ordering: ts}}
table_types: [cow]
schema:
  - {name: id, type: int}
  - {name: v, type: int}
  - {name: ts, type: long}
rows:
  - {id: 1, v: 7, ts: 100}
  - {id: 2, v: -3, ts: 100}
steps:
  - {op: change_type, column: v, to: long}
  - op: upsert
    rows: [{id: 1, v: 8, ts: 200}, {id: 2, v: 9, ts: 200}]
"""


def test_a_table_without_old_files_gives_errors_naming_the_precondition(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios" / "broken"
    scenarios.mkdir(parents=True)
    (scenarios / "rewrites_everything.yaml").write_text(REWRITES_EVERYTHING)
    options = RunOptions(
        shapes=("all",),
        scenarios_dir=scenarios.parent,
        engines=("spark",),
        formats=("hudi",),
        reports_dir=tmp_path / "reports",
    )
    cells = Runner(options, Progress(quiet=True)).run().cells
    assert len(cells) == 3 * 2  # cow: three query types, two variants
    for cell in cells:
        assert cell.outcome is Outcome.ERROR
        assert cell.reason.startswith(
            "the table does not hold what broken/rewrites_everything is about: old_files: "
            "no live file was written before the schema change"
        )
        assert cell.evidence.files is not None
        assert cell.evidence.files["file_groups"] == 2
        assert [g["when"] for g in cell.evidence.files["groups"]] == ["after the schema change"]


def test_a_failed_read_keeps_the_jvms_cause_chain_with_its_frames(tmp_path: Path) -> None:
    context = RunContext(tmp_path, SparkRuntime(tmp_path / "logs"))
    engine = SparkEngine(context)
    try:
        engine.start()
        missing = TableRef("t_missing", tmp_path / "nowhere", "cow", "id")
        start = log_size(engine.log_path)
        with pytest.raises(Exception) as raised:
            engine.query(engine.read_sql(missing, "snapshot"), engine.variants_of("hudi")[0])
        text = error_text(raised.value)
        lines = text.splitlines()
        assert lines[0] == describe_error(raised.value)
        # Beyond the first line: the JVM's exceptions, each with the frames under it.
        assert any(line.startswith("    at org.apache.") for line in lines[1:]), text
        assert any(line.startswith("    at org.apache.hudi.") for line in lines[1:]), text
        assert len(text) <= 4000
        assert failure_log(engine, start)  # the Spark log's part, or its end
    finally:
        engine.stop()
        context.close()


def test_the_driver_jvm_starts_from_its_class_archive(tmp_path: Path) -> None:
    """The driver JVM maps the archive of its classes (or writes it, the first time on a
    machine), and after a clean stop a whole archive is in the cache."""
    runtime = SparkRuntime(tmp_path / "logs")
    try:
        runtime.session()
        archive = runtime._archive
        assert archive.path is not None
        command = Path(f"/proc/{runtime._jvm_process().pid}/cmdline").read_bytes().split(b"\0")
        assert archive.flags[0].encode() in command, command
    finally:
        runtime.stop()
    assert archive.path.read_bytes()[:4] == (0xF00BABA8).to_bytes(4, "little")
    assert archive.pending is None or not archive.pending.exists()
