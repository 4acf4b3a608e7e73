"""Integration: the Iceberg writer, with Spark and Iceberg's runtime in a process of its own.

Real tables of the catalog's scenarios, both table types: the table is where the writer says,
its live files show the schema each was written in (old files with the name before a rename,
new ones with the name after), merge-on-read writes delete files where copy-on-write rewrites
data files, and what Iceberg refuses (a type change the spec does not allow, a write whose new
column MERGE INTO leaves out) is a refused change with the writer's own message.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import SCENARIOS

from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.engines.table import reference_time_ms
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.oracle import expected
from lakecompat.harness.writer import create_writer
from lakecompat.harness.writer.base import TableWriter, WriteResult
from lakecompat.harness.writer.iceberg.files import current_metadata, snapshot_log

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def writer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TableWriter]:
    run = tmp_path_factory.mktemp("iceberg")
    iceberg = create_writer(SparkRuntime(run / "logs"), run / "tables", 300, "iceberg")
    yield iceberg
    iceberg.close()


def write(writer: TableWriter, scenario: str, table_type: str) -> WriteResult:
    (found,) = load_scenarios(SCENARIOS, scenario)
    return writer.write(found, table_type)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_a_rename_then_delete_keeps_files_of_both_names(
    writer: TableWriter, table_type: str
) -> None:
    result = write(writer, "rename_column/then_delete", table_type)
    assert result.ok, result.message
    table = result.table
    assert table.format == "iceberg" and table.path == writer.tables_dir / table.name
    assert (table.path / "metadata" / "version-hint.text").is_file()
    assert ("product", "string") in table.columns and ("name", "string") not in table.columns
    files = result.files or {}
    summary = files["summary"]
    assert "seed rows, before the schema change" in summary and "[id int, name string" in summary
    assert files["unmet"] == [], summary
    deletes = [g for g in files["groups"] if g.get("delete")]
    if table_type == "mor":
        # The delete is a delete file beside the seed row's data file.
        assert deletes and deletes[0]["columns"] == "", summary
        assert any("DELETE FROM" in s for s in result.sql or [])
    else:
        assert deletes == [], summary
    # The reference snapshot is the seed rows'; the delete made a later one, which is no
    # append: an incremental read after the reference has nothing to return.
    assert result.table.reference_instant == result.instants[0]
    assert result.instants[-1] > result.instants[0]  # type: ignore[operator]
    assert result.table.appended == ()


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_rows_appended_before_a_rename_are_what_an_incremental_read_returns(
    writer: TableWriter, table_type: str
) -> None:
    result = write(writer, "rename_column/after_appended_rows", table_type)
    assert result.ok, result.message
    table = result.table
    # Seed rows (the reference), add_column (no snapshot), the insert (an append), the rename.
    assert table.appended == (2,)
    log = snapshot_log(table.path)
    assert log[result.instants[2][1]][1] == "append"  # type: ignore[index]
    # Time travel by timestamp names a moment between the reference commit and the insert's.
    committed = log[table.reference_instant[1]][0]  # type: ignore[index]
    inserted = log[result.instants[2][1]][0]  # type: ignore[index]
    assert committed <= reference_time_ms(table) < inserted
    (scenario,) = load_scenarios(SCENARIOS, "rename_column/after_appended_rows")
    appended = expected(scenario.spec, table_type, "incremental", table.appended)
    assert appended.to_pylist() == [
        {"id": 4, "name": "date", "price": 3.0, "ts": 200, "colour": "brown"},
        {"id": 5, "name": "elderberry", "price": 6.0, "ts": 200, "colour": "purple"},
    ]


def test_a_dropped_and_readded_column_is_a_new_column(writer: TableWriter) -> None:
    result = write(writer, "drop_column/drop_then_readd", "mor")
    assert result.ok, result.message
    statements = "\n".join(result.sql or [])
    assert "DROP COLUMN `qty`" in statements and "ADD COLUMNS (`qty` INT)" in statements
    summary = (result.files or {})["summary"]
    new_file = (
        "after the schema change: 1 data file [id int, name string, price double, ts long, qty int]"
    )
    assert new_file in summary, summary


def test_what_iceberg_refuses_is_a_refused_change_with_its_message(writer: TableWriter) -> None:
    refused = write(writer, "type_change/int_to_string", "cow")
    assert refused.rejected and refused.failed_at == "steps[0] (change_type)"
    assert "Cannot change column type: v: int -> string" in (refused.message or "")
    left_out = write(writer, "schema_on_write/extra_column", "cow")
    assert left_out.rejected and left_out.failed_at == "steps[0] (upsert)"
    assert "left out column(s) origin" in (left_out.message or "")
    widened = write(writer, "type_change/int_to_long", "cow")
    assert widened.ok and ("v", "bigint") in widened.table.columns


def test_the_table_cache_keeps_an_iceberg_table_where_it_was_written(
    tmp_path: Path, writer: TableWriter
) -> None:
    runtime = SparkRuntime(tmp_path / "logs")
    cache = tmp_path / "cache"
    first = create_writer(runtime, tmp_path / "run1", 300, "iceberg", cache=cache)
    try:
        written = first.write(*load_scenarios(SCENARIOS, "rename_column/rename"), "mor")
    finally:
        first.close()
    assert written.ok and not written.cached
    assert written.table.path.is_relative_to(cache / "iceberg")
    metadata = current_metadata(written.table.path)
    assert metadata["location"] == written.table.path.as_uri()
    second = create_writer(runtime, tmp_path / "run2", 300, "iceberg", cache=cache)
    cached = second.write(*load_scenarios(SCENARIOS, "rename_column/rename"), "mor")
    assert cached.cached and cached.table == written.table and cached.files == written.files
    assert not (tmp_path / "run2").exists()


def test_format_version_3_writes_deletion_vectors(tmp_path: Path) -> None:
    runtime = SparkRuntime(tmp_path / "logs")
    v3 = create_writer(runtime, tmp_path / "tables", 300, "iceberg", table_version="3")
    try:
        result = write(v3, "rename_column/then_delete", "mor")
    finally:
        v3.close()
    assert result.ok, result.message
    assert v3.versions["format_version"] == "3"
    assert current_metadata(result.table.path)["format-version"] == 3
    files = result.files or {}
    deletes = [g for g in files["groups"] if g.get("delete")]
    assert deletes, files["summary"]
    assert "Iceberg format version 3" in files["summary"]
    # The delete is a deletion vector in a Puffin file, kept beside the data it applies to.
    assert list((result.table.path / "data").glob("*-deletes.puffin"))
