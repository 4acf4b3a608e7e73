"""Integration: Delta Lake tables written by real Spark with delta-spark, read by Spark,
delta-rs (both read paths), Polars and Daft, judged against the oracle and the reviewed known
outcomes.

A rename (under column mapping) and a drop then re-add of a name (the re-added column is a new
one: its old rows read NULL), and a merge-on-read table whose update and delete of rows in a
batch written before a new column left deletion vectors, each read with every query type each
reader has. And the project's Delta 4 version point (`versions/delta-3.3-to-4.0.yaml`): Delta 4.0.1
on Spark 4.0.1, in a Python environment of its own, widens a column's type where Delta 3.3.2
refuses it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, SocketWatch, is_loopback, lakecompat, only_run

from lakecompat.harness.results.expectations import Verdict
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_cells, load_run
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration

DELETION_VECTORS = "merge_on_read/batch_then_add_update_delete"
SUBSET = ("rename_column/rename", "drop_column/drop_then_readd", DELETION_VECTORS)
ENGINES = ("spark", "deltalake", "polars", "daft", "duckdb")
WATCH = SocketWatch()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Cell]]:
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=",".join(SUBSET),
        engines=ENGINES,
        formats=("delta",),
        reports_dir=tmp_path_factory.mktemp("delta"),
        expectations_dir=SCENARIOS.parent / "expectations",
    )
    result = Runner(options, WATCH).run()
    regressions = [j.cell for j in result.judged if j.verdict is not Verdict.AS_EXPECTED]
    assert regressions == [], [(c.key, c.outcome, c.reason) for c in regressions]
    return result.run_dir, load_run(result.run_dir)[1]


def cells_of(cells: list[Cell], scenario: str, **fields: str) -> dict[tuple[str, ...], Cell]:
    """The `SELECT *` cells of `scenario` by (engine, variant, table type, query type)."""
    return {
        (c.engine, c.variant, c.table_type, c.query_type): c
        for c in cells
        if c.scenario == scenario
        and c.shape == "all"
        and all(getattr(c, k) == v for k, v in fields.items())
    }


def test_every_process_listens_on_loopback_only(run: tuple[Path, list[Cell]]) -> None:
    exposed = [(pid, a, WATCH.commands.get(pid)) for pid, a in WATCH.sockets if not is_loopback(a)]
    assert exposed == []


def test_a_rename_under_column_mapping_read_by_every_delta_reader(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    renamed = cells_of(cells, "rename_column/rename")
    assert {key[0] for key in renamed} == set(ENGINES)
    assert {key[1] for key in renamed if key[0] == "deltalake"} == {"pyarrow", "datafusion"}
    # Spark and delta-rs's DataFusion path read the renamed column through the table's column
    # mapping, at every version.
    for table_type in ("cow", "mor"):
        for query_type in ("snapshot", "time_travel", "time_travel_timestamp"):
            for reader in (("spark", "default"), ("deltalake", "datafusion")):
                cell = renamed[(*reader, table_type, query_type)]
                assert cell.outcome is Outcome.PASS, (cell.key, cell.reason)
    # delta-rs's PyArrow path reads the physical column names of a column-mapped table's files:
    # no column matches, every value is NULL, without an error.
    wrong = renamed[("deltalake", "pyarrow", "cow", "snapshot")]
    assert wrong.outcome is Outcome.WRONG, wrong.reason
    # Polars refuses a table that needs column mapping.
    polars = renamed[("polars", "default", "cow", "snapshot")]
    assert polars.outcome is Outcome.ERROR
    assert "column mapping" in polars.reason
    # Neither Polars nor Daft reads the change data feed.
    for engine in ("polars", "daft"):
        lacking = renamed[(engine, "default", "cow", "changelog")]
        assert lacking.outcome is Outcome.UNSUPPORTED and "change data feed" in lacking.reason
    # The table's evidence: its protocol and column mapping, the files' physical column names.
    files = renamed[("spark", "default", "cow", "snapshot")].evidence.files
    assert files is not None
    notes = "\n".join(files["notes"])
    assert "Delta protocol: reader version 2" in notes and "column mapping name" in notes
    assert any("[col-" in group["columns"] for group in files["groups"])
    assert all(c.writer["delta"] and c.writer["column_mapping"] == "name" for c in cells)


def test_a_drop_then_readd_reads_the_new_column_null_for_old_rows(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    dropped = cells_of(cells, "drop_column/drop_then_readd")
    for reader in (("spark", "default"), ("deltalake", "datafusion")):
        for table_type in ("cow", "mor"):
            cell = dropped[(*reader, table_type, "snapshot")]
            assert cell.outcome is Outcome.PASS, (cell.key, cell.reason)
    files = dropped[("spark", "default", "cow", "snapshot")].evidence.files
    assert files is not None
    # The dropped column's physical name stays in the old files; the re-added one has its own.
    assert any("dropped]" in group["columns"] for group in files["groups"])


def test_a_table_with_deletion_vectors(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    batch = cells_of(cells, DELETION_VECTORS)
    files = batch[("spark", "default", "mor", "snapshot")].evidence.files
    assert files is not None
    notes = "\n".join(files["notes"])
    assert "deletionVectors" in notes and "1 deletion vector(s), 2 row(s) deleted" in notes
    assert any(group.get("delete") for group in files["groups"])
    # Spark, delta-rs's DataFusion path, Polars and DuckDB apply the deletion vectors, to the
    # batch's file written before the new column too.
    readers = (("spark", "default"), ("deltalake", "datafusion"), ("polars", "default"))
    for reader in (*readers, ("duckdb", "default")):
        for query_type in ("snapshot", "time_travel"):
            cell = batch[(*reader, "mor", query_type)]
            assert cell.outcome is Outcome.PASS, (cell.key, cell.reason)
    # delta-rs's PyArrow path and Daft refuse the feature.
    refused = {
        ("deltalake", "pyarrow"): "deletionVectors",
        ("daft", "default"): "deletion vectors are not yet supported",
    }
    for reader, said in refused.items():
        cell = batch[(*reader, "mor", "snapshot")]
        assert cell.outcome is Outcome.ERROR and said in cell.reason, (cell.key, cell.reason)
    # The change data feed: the update as a DELETE and an INSERT, the delete as a DELETE.
    for reader in (("spark", "default"), ("deltalake", "pyarrow")):
        cell = batch[(*reader, "mor", "changelog")]
        assert cell.outcome is Outcome.PASS, (cell.key, cell.reason)
    spark_sql = batch[("spark", "default", "mor", "changelog")].evidence.sql or ""
    assert "table_changes_by_path(" in spark_sql


def test_the_delta_4_point_writes_and_reads_with_spark_4(tmp_path: Path) -> None:
    """`lakecompat qualify` with the project's Delta 3.3 to 4.0 versions file on one type
    change, read by Spark and delta-rs."""
    versions = SCENARIOS.parent / "versions" / "delta-3.3-to-4.0.yaml"
    done = lakecompat(
        *("qualify", "--versions", versions, "--engines", "spark,deltalake"),
        *("--scenarios", "type_change/int_to_long", "--table-types", "cow"),
        *("--reports", tmp_path, "--quiet"),
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    points = {}
    for name in ("delta-3.3", "delta-4.0"):
        _, cells = load_cells(only_run(tmp_path / "points" / name))
        points[name] = cells_of(cells, "type_change/int_to_long")
    old, new = points["delta-3.3"], points["delta-4.0"]
    spark_old, spark_new = (p[("spark", "default", "cow", "snapshot")] for p in (old, new))
    assert spark_old.writer["spark"] == "3.5.9" and spark_old.writer["delta"] == "3.3.2"
    assert spark_new.writer["spark"] == "4.0.1" and spark_new.writer["delta"] == "4.0.1"
    # Spark 4 reads the tables Delta 4 writes (the cell says which Spark read).
    assert spark_new.engine_version == "4.0.1" and spark_old.engine_version == "3.5.9"
    # Delta 3.3.2 refuses int to long; Delta 4.0.1 widens it, and Spark 4 reads it right.
    assert spark_old.outcome is Outcome.REJECTED, spark_old.reason
    assert spark_new.outcome is Outcome.PASS, spark_new.reason
    files = spark_new.evidence.files
    assert files is not None and "typeWidening" in "\n".join(files["notes"])
    # delta-rs 1.6.6 refuses the type widening feature, on both of its read paths.
    for variant in ("pyarrow", "datafusion"):
        cell = new[("deltalake", variant, "cow", "snapshot")]
        assert cell.outcome is Outcome.ERROR, (cell.key, cell.reason)
        assert "typeWidening" in cell.reason or "TypeWidening" in cell.reason
    qualification = (tmp_path / "qualify").glob("**/qualify.md")
    assert any("delta-3.3" in path.read_text() for path in qualification)
