"""Integration: Hudi and Iceberg tables in one run, read by real Spark, Trino, PyIceberg, Daft
and Polars.

A rename of a column (with nothing written after it, and with rows appended after it), a drop
then re-add, a promotion Iceberg allows and one it refuses, a new nested field and a
partitioned table, each written in both formats, and a partition evolution (Iceberg only), read
with every query type each engine has; the run is judged by the reviewed known outcomes, and
run again in the reverse order, which must give the same cells.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import (
    INSTANT,
    SCENARIOS,
    ChildRun,
    SocketWatch,
    is_loopback,
    lakecompat,
    overview_failures_not_about_their_operation,
)

from lakecompat.engines.infra.artifacts import maven_repo
from lakecompat.engines.infra.iceberg_jars import iceberg_spark_runtime
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.causes import unfounded_baseline_notes
from lakecompat.harness.results.expectations import Judged
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration

SUBSET = (
    "rename_column/rename",
    "rename_column/after_appended_rows",
    "drop_column/drop_then_readd",
    "type_change/int_to_long",
    "type_change/int_to_string",
    "add_column/nested_struct_field",
    "keys_partitions/partitioned_add_column",
    "keys_partitions/partition_evolution_add_field",
)
ENGINES = ("spark", "trino", "pyiceberg", "daft", "polars")


class IcebergWatch(SocketWatch):
    """The listening sockets at the first Iceberg cell: every process of both formats is up."""

    def cell(self, cell: Cell, judged: Judged | None = None) -> None:
        if cell.format == "iceberg":
            super().cell(cell, judged)


WATCH = IcebergWatch()
EXPECTATIONS = SCENARIOS.parent / "expectations"


def options(reports: Path, reverse: bool = False) -> RunOptions:
    return RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=",".join(SUBSET),
        engines=ENGINES,
        formats=("hudi", "iceberg"),
        reports_dir=reports,
        expectations_dir=EXPECTATIONS,
        reverse_order=reverse,
    )


@pytest.fixture(scope="module", autouse=True)
def reverse_beside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChildRun]:
    """The run in the reverse order, started when the module starts, in a process of its own
    beside the module's first run (a table both need is written once: the table cache's lock
    makes the other wait for it)."""
    child = ChildRun(options(tmp_path_factory.mktemp("reverse"), reverse=True))
    yield child
    child.stop()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Cell]]:
    result = Runner(options(tmp_path_factory.mktemp("iceberg")), WATCH).run()
    return result.run_dir, load_run(result.run_dir)[1]


def test_every_process_of_both_formats_listens_on_loopback_only(
    run: tuple[Path, list[Cell]],
) -> None:
    # Hudi's Spark (writer and reader), Iceberg's reading Spark, the Metastore, Trino and
    # PyIceberg's worker; Iceberg's writing Spark too where a table was not in the table cache
    # (it starts with the first table it writes), in the same SparkRuntime as the others.
    commands = list(WATCH.commands.values())
    assert sum("pyspark-shell" in c for c in commands) >= 2, [c[-300:] for c in commands]
    for main_class in ("HiveMetaStore", "TrinoMain", "library/worker.py"):
        assert any(main_class in c for c in commands), (main_class, WATCH.commands)
    exposed = [(pid, a, WATCH.commands.get(pid)) for pid, a in WATCH.sockets if not is_loopback(a)]
    assert exposed == []


def cells_of(cells: list[Cell], scenario: str, table_format: str = "iceberg") -> list[Cell]:
    return [c for c in cells if c.scenario == scenario and c.format == table_format]


#: What each Iceberg reader lacks: those cells are UNSUPPORTED, with the reason.
LACKING = {
    ("trino", "incremental"),
    ("daft", "incremental"),
    ("daft", "time_travel_timestamp"),
    ("polars", "time_travel_timestamp"),
    ("pyiceberg", "changelog"),
    ("daft", "changelog"),
    ("polars", "changelog"),
}


#: The known failures of these scenarios' cells: engine, query type, the scenarios' prefix,
#: outcome and what the reason says.
KNOWN_FAILURES = (
    ("daft", "snapshot", "drop", Outcome.ERROR, "Failed to decode a parquet column"),
    ("trino", "changelog", "rename", Outcome.WRONG, "column missing: `colour`"),
)


def test_every_iceberg_reader_reads_a_rename_and_a_drop_then_readd(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    for scenario in ("rename_column/after_appended_rows", "drop_column/drop_then_readd"):
        found = cells_of(cells, scenario)
        # Each engine: every query type of both table types, then the query shapes.
        assert {c.engine for c in found} == set(ENGINES)
        assert {(c.table_type, c.query_type) for c in found} == {
            (t, q)
            for t in ("cow", "mor")
            for q in (
                "snapshot",
                "incremental",
                "time_travel",
                "time_travel_timestamp",
                "changelog",
            )
        }
        lacking = [c for c in found if (c.engine, c.query_type) in LACKING]
        assert {(c.engine, c.query_type) for c in lacking} == LACKING
        assert all(c.outcome is Outcome.UNSUPPORTED and c.reason for c in lacking)
        # Known outcomes: Daft fails on the data files written before the drop; Trino's
        # changelog names the columns as the last write's schema did.
        failing = []
        for engine, query_type, about, outcome, said in KNOWN_FAILURES:
            concerned = scenario.startswith(about)
            fails = [
                c for c in found if concerned and (c.engine, c.query_type) == (engine, query_type)
            ]
            assert bool(fails) == concerned, (engine, scenario)
            assert all(c.outcome is outcome and said in c.reason for c in fails), fails
            failing += fails
        rest = [c for c in found if c not in failing and c not in lacking]
        wrong = [(c.engine, c.table_type, c.query_type, c.shape, c.reason) for c in rest]
        assert all(c.outcome is Outcome.PASS for c in rest), wrong
        assert all(c.writer["iceberg"] and "hudi" not in c.writer for c in found)
        assert all(c.evidence.files and c.evidence.files["groups"] for c in found)
    trino = {
        c.query_type: c
        for c in cells_of(cells, "drop_column/drop_then_readd")
        if c.engine == "trino" and c.table_type == "mor"
    }
    sql = trino["time_travel"].evidence.sql
    assert 'FROM iceberg."default_iceberg"."t_drop_column_drop_then_readd_' in sql
    assert "FOR VERSION AS OF" in sql
    assert "FOR TIMESTAMP AS OF TIMESTAMP '20" in trino["time_travel_timestamp"].evidence.sql
    assert (
        "system.table_changes(schema_name => 'default_iceberg'" in trino["changelog"].evidence.sql
    )
    assert "end_snapshot_id => " in trino["changelog"].evidence.sql
    renamed = cells_of(cells, "rename_column/after_appended_rows")
    spark = {c.query_type: c for c in renamed if c.engine == "spark" and c.shape == "all"}
    assert "iceberg-spark-runtime-3.5_2.12" in spark["snapshot"].evidence.sql
    assert "SET spark.sql.catalog.lakecompat_" in spark["snapshot"].evidence.sql
    assert "USING iceberg OPTIONS" in spark["incremental"].evidence.sql
    assert "'start-snapshot-id'" in spark["incremental"].evidence.sql
    assert "TIMESTAMP AS OF '20" in spark["time_travel_timestamp"].evidence.sql
    assert ".system.create_changelog_view(table => 'tables." in spark["changelog"].evidence.sql
    # The Hudi tables of the same scenarios are read too, each engine by its own formats.
    hudi = cells_of(cells, "rename_column/after_appended_rows", "hudi")
    assert {c.engine for c in hudi} == {"spark", "trino", "daft"}
    polars = {c.query_type: c for c in renamed if c.engine == "polars" and c.shape == "all"}
    assert "pl.scan_iceberg(" in polars["snapshot"].evidence.sql
    assert "metadata.json" in polars["snapshot"].evidence.sql
    assert "from_snapshot_id_exclusive=" in polars["incremental"].evidence.sql
    pyiceberg = {c.query_type: c for c in renamed if c.engine == "pyiceberg" and c.shape == "all"}
    assert "incremental_append_scan(" in pyiceberg["incremental"].evidence.sql
    assert "snapshot_as_of_timestamp(" in pyiceberg["time_travel_timestamp"].evidence.sql


def test_what_iceberg_refuses_is_rejected_and_what_it_allows_is_read(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    # What an engine lacks is UNSUPPORTED whatever the table; every other cell is judged.
    refused, lacking = read_or_lacking(cells_of(cells, "type_change/int_to_string"))
    assert refused and all(c.outcome is Outcome.REJECTED for c in refused)
    assert "Cannot change column type" in refused[0].reason or "NOT_SUPPORTED" in refused[0].reason
    assert lacking and all(c.outcome is Outcome.UNSUPPORTED for c in lacking)
    promoted, lacking = read_or_lacking(cells_of(cells, "type_change/int_to_long"))
    # The merge-on-read table's upsert wrote delete files, which changelog reads refuse (known).
    deletes = [c for c in promoted if c.table_type == "mor" and c.query_type == "changelog"]
    assert {c.engine for c in deletes} == {"spark", "trino"}
    assert all(c.outcome is Outcome.ERROR for c in deletes)
    said = {c.engine: c.reason for c in deletes}
    assert "Delete files are currently not supported in changelog scans" in said["spark"]
    assert "NOT_SUPPORTED" in said["trino"], said
    promoted = [c for c in promoted if c not in deletes]
    assert promoted and all(c.outcome is Outcome.PASS for c in promoted)
    assert lacking and all(c.outcome is Outcome.UNSUPPORTED for c in lacking)


def read_or_lacking(found: list[Cell]) -> tuple[list[Cell], list[Cell]]:
    """The cells of query types the engine has, and those of the ones it lacks."""
    lacking = [c for c in found if (c.engine, c.query_type) in LACKING]
    return [c for c in found if c not in lacking], lacking


def test_a_filter_on_a_partition_field_added_later_reads_old_and_new_files(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    evolved = [c for c in cells if c.scenario == "keys_partitions/partition_evolution_add_field"]
    assert {c.format for c in evolved} == {"iceberg"}  # no Hudi table: Hudi has no such step
    spark = next(c for c in evolved if c.engine == "spark" and c.query_type == "snapshot")
    # Files of both partitionings are live: the insert's, before the change, and the upsert's.
    groups = {(g["written_by"], g["when"]) for g in spark.evidence.files["groups"]}
    assert ("steps[0] insert", "before the schema change") in groups, groups
    assert ("steps[2] upsert", "after the schema change") in groups, groups
    filters = {c.engine: c for c in evolved if c.shape == "filter" and c.table_type == "cow"}
    assert set(filters) == set(ENGINES)
    for engine in ("spark", "trino", "pyiceberg", "polars"):
        assert filters[engine].outcome is Outcome.PASS, filters[engine].reason
    # Daft answers from partition values alone and keeps an old file's other rows (known).
    assert filters["daft"].outcome is Outcome.WRONG
    assert "do not match it" in filters["daft"].reason


def test_known_outcomes_judge_both_formats_and_the_reports_show_each(
    run: tuple[Path, list[Cell]],
) -> None:
    run_dir, _ = run
    info, _ = load_run(run_dir)
    assert info["formats"] == ["hudi", "iceberg"]
    assert set(info["writers"]) == {"hudi", "iceberg"}
    results = (run_dir / "results.json").read_text()
    assert '"format": "iceberg"' in results
    matrix = (run_dir / "matrix.md").read_text()
    assert "## Apache Hudi: operations × engines" in matrix
    assert "## Apache Iceberg: operations × engines" in matrix
    summary = (run_dir / "summary.md").read_text()
    assert "+ Iceberg 1.10.0 writing format version 2" in summary
    assert "0 regressions" in summary
    cases = ET.parse(run_dir / "junit.xml").getroot().iter("testcase")
    names = {f"{case.get('classname')}.{case.get('name')}" for case in cases}
    assert "trino.iceberg.mor.time_travel.drop_column/drop_then_readd[default]" in names
    assert "trino.cow.snapshot.drop_column/drop_then_readd[column_names]" in names
    page = (run_dir / "matrix.html").read_text()
    assert "<b>format:</b>" in page  # the page's filter of formats


def test_the_overview_shows_only_failures_about_the_operation(
    run: tuple[Path, list[Cell]],
) -> None:
    """No overview row of either format shows a failure of the baseline table, a read with
    nothing to read, or an engine that cannot read the format at all: those are said once,
    under the table."""
    run_dir, cells = run
    assert overview_failures_not_about_their_operation(run_dir) == []
    # A rename commits no Iceberg snapshot: after it, incremental and changelog have no range.
    empty = [
        c
        for c in cells_of(cells, "rename_column/rename")
        if c.query_type in ("incremental", "changelog") and (c.engine, c.query_type) not in LACKING
    ]
    assert {(c.engine, c.query_type) for c in empty} == {
        ("spark", "incremental"),
        ("spark", "changelog"),
        ("trino", "changelog"),
        ("pyiceberg", "incremental"),
        ("polars", "incremental"),
    }
    assert all(c.outcome is Outcome.UNSUPPORTED for c in empty), [c.reason for c in empty]
    assert all(c.reason.startswith("nothing to read: no snapshot was committed") for c in empty)
    matrix = (run_dir / "matrix.md").read_text()
    assert "- `daft` reads no Apache Hudi table of this run" in matrix
    assert "| operation | writer | spark | trino | pyiceberg | daft | polars |" in matrix
    assert "| operation | writer | spark | trino |" in matrix  # Hudi's, without Daft
    # Baseline tables that fail alike are said once, baseline/no_change first.
    (said,) = [
        line
        for line in matrix.splitlines()
        if line.startswith("- `spark` fails without any schema change too (the baseline table")
        and "): ERROR on MOR changelog (" in line
    ]
    assert (
        said.split("): ")[0]
        .split("(the baseline table")[1]
        .lstrip("s ")
        .startswith("`baseline/no_change`")
    )
    # Every cell said to fail without any schema change fails as the baseline it names.
    assert unfounded_baseline_notes(cells) == []


def answers(cells: list[Cell]) -> dict[tuple[str, ...], tuple[object, ...]]:
    """What each cell found, without commit times."""
    return {
        c.key: (c.outcome, INSTANT.sub("<instant>", c.reason), c.evidence.sample) for c in cells
    }


def test_no_iceberg_cell_depends_on_what_ran_before(
    run: tuple[Path, list[Cell]], reverse_beside: ChildRun
) -> None:
    """Run in the reverse order (in a process of its own, beside the first run), every cell of
    both formats is what it was."""
    run_dir, cells = run
    again_dir, again = reverse_beside.cells()
    assert load_run(again_dir)[0]["scenarios"] != load_run(run_dir)[0]["scenarios"]
    assert {c.format for c in again} == {"hudi", "iceberg"}
    assert len([c for c in again if c.format == "iceberg"]) > len(SUBSET) * len(ENGINES)
    assert answers(again) == answers(cells)


@pytest.mark.parametrize(
    ("cell_id", "outcome"),
    [
        ("daft.iceberg.mor.snapshot.drop_column/drop_then_readd[default]", "ERROR"),
        ("trino.iceberg.cow.time_travel.rename_column/after_appended_rows[default]", "PASS"),
    ],
)
def test_an_iceberg_cell_is_reproduced_without_lakecompat(
    run: tuple[Path, list[Cell]], tmp_path: Path, cell_id: str, outcome: str
) -> None:
    """`lakecompat repro` of an Iceberg cell: writer.py (Spark with Iceberg's runtime) makes
    the table lakecompat's writer makes, and the reader files' query judges as the run did."""
    run_dir, cells = run
    cell = {case_id(c): c for c in cells}[cell_id]
    assert cell.outcome.value == outcome
    done = lakecompat("repro", run_dir, cell_id, "--out", "repro", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    out = tmp_path / "repro"
    record = json.loads((out / "repro.json").read_text())
    assert record["same_table"] is True, record["table_check"]
    ours, theirs = record["compared"]["lakecompat"], record["compared"]["writer.py"]
    assert ours["sha256"] == theirs["sha256"] and ours["columns"] == theirs["columns"]
    assert record["again"] == {"outcome": outcome, "reason": cell.reason}
    assert record["from_files"] == {"outcome": outcome, "reason": cell.reason}
    issue = (out / "ISSUE.md").read_text()
    assert f"Iceberg {cell.writer['iceberg']} (format version 2)" in issue
    assert f"iceberg-spark-runtime-3.5_2.12:{cell.writer['iceberg']}" in issue
    assert "Hudi" not in issue, issue
    runtime = iceberg_spark_runtime(cell.writer["iceberg"]).local_path(maven_repo())
    assert f"--jars {runtime}" in (out / "writer.py").read_text()
    table = "/tmp/lakecompat-repro/t_" + cell.scenario.replace("/", "_")
    if cell.engine == "trino":  # registered in Trino's Iceberg catalog, at the script's table
        register = (out / "register.sql").read_text()
        assert f"table_location => 'file://{table}_cow'" in register
        assert "trino --server http://localhost:8080 -f register.sql" in issue
        assert "`snapshots` metadata table" in issue  # time travel names a snapshot id
    else:  # a Python library: reader.py names the packages and the script's table
        code = (out / "reader.py").read_text()
        assert code.startswith(f"# daft {cell.engine_version}: pip install daft==")
        assert f"{table}_mor/metadata/" in code and code.endswith("print(answer)\n")
        assert "python reader.py" in issue and f"{table}_mor/metadata/" in issue
    assert not (out / "work" / "script-table").exists()


def test_trino_reads_a_run_of_iceberg_tables_alone(tmp_path: Path) -> None:
    """Trino has its Hudi catalogs only in runs of Hudi tables: the control check of a run of
    Iceberg tables alone reads its plain Parquet table through the Hive catalog, and the
    cells are read (not failed as an engine that could not start)."""
    run = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern="baseline/arrays",
        engines=("trino",),
        formats=("iceberg",),
        table_types=("cow",),
        shapes=("all",),
        reports_dir=tmp_path,
    )
    cells = Runner(run, Progress(quiet=True)).run().cells
    assert cells and not [c.reason for c in cells if c.outcome is Outcome.ENGINE_FAILED]
    assert Outcome.PASS in {c.outcome for c in cells}
