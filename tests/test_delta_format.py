"""Delta Lake's writer parts without Spark: the table features a scenario gets, the log replayed
for the evidence of the live files, and its version option in known outcomes and version
points."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import SCENARIOS

from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.delta_jars import check_column_mapping, delta_pyspark, delta_spark
from lakecompat.engines.spark.delta import delta_jars
from lakecompat.harness.cli import main
from lakecompat.harness.qualify.versions import VersionsError, load_versions
from lakecompat.harness.results.expectations import in_range
from lakecompat.harness.run.runner import reading_versions
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.writer.delta.files import (
    committed_states,
    deletes_note,
    live_files,
    protocol_note,
    replay,
    vector_file,
)
from lakecompat.harness.writer.delta.statements import (
    delete_statement,
    maps_columns,
    table_properties,
    widens_types,
)


def scenario(name: str) -> Scenario:
    return next(s for s in load_scenarios(SCENARIOS) if s.id == name)


def test_each_feature_is_turned_on_where_the_scenario_needs_it() -> None:
    rename, widen = scenario("rename_column/rename"), scenario("type_change/int_to_long")
    added, extra = scenario("add_column/at_end"), scenario("schema_on_write/extra_column")
    assert maps_columns(rename.spec) and not maps_columns(added.spec)
    assert widens_types(widen.spec) and widens_types(scenario("schema_on_write/promoted_type").spec)
    # An upsert that brings a new column changes no type.
    assert not widens_types(extra.spec) and not widens_types(added.spec)
    assert table_properties("cow", "name", rename.spec) == {
        "delta.columnMapping.mode": "name",
        "delta.enableDeletionVectors": "false",
        "delta.enableChangeDataFeed": "true",
    }
    mor = table_properties("mor", "id", widen.spec)
    assert "delta.columnMapping.mode" not in mor  # no rename or drop: no column mapping
    assert mor["delta.enableDeletionVectors"] == "true"
    assert mor["delta.enableTypeWidening"] == "true"
    # Without column mapping, the rename is tried as Delta's users would try it: refused.
    assert "delta.columnMapping.mode" not in table_properties("cow", "none", rename.spec)


def test_a_delete_is_a_merge_since_delta_deletes_take_no_subquery() -> None:
    statement = delete_statement("delta.`/t`", "id")
    assert statement.startswith("MERGE INTO delta.`/t` t USING lakecompat_rows s ON t.`id`")
    assert statement.endswith("WHEN MATCHED THEN DELETE")


def test_only_the_three_column_mapping_modes_are_written() -> None:
    check_column_mapping("3.3.2", "id", "--column-mapping id")
    with pytest.raises(ProvisioningError, match=r"^--column-mapping ids: the Delta writer"):
        check_column_mapping("3.3.2", "ids", "--column-mapping ids")


def test_delta_4_runs_on_spark_4_and_delta_3_on_lakecompats_own_spark() -> None:
    assert delta_pyspark("3.3.2") == "" and delta_spark("3.3.2").artifact == "delta-spark_2.12"
    assert delta_pyspark("4.0.1") == "4.0.1"
    assert delta_spark("4.0.1").artifact == "delta-spark_2.13"
    jars = delta_jars("4.0.1")
    assert jars.pyspark == "4.0.1" and jars.release == "Delta 4.0.1 on Spark 4.0.1"
    assert delta_jars("3.3.2").pyspark == ""
    for unknown in ("4.1.0", "2.4.0", "next"):
        with pytest.raises(ProvisioningError, match=rf"^lakecompat runs .* for Delta {unknown}$"):
            delta_spark(unknown)


Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85(raw: bytes) -> str:
    """Z85 as Delta codes a deletion vector's UUID (4 bytes to 5 characters, big-endian)."""
    out = ""
    for start in range(0, len(raw), 4):
        number = int.from_bytes(raw[start : start + 4], "big")
        digits = ""
        for _ in range(5):
            number, digit = divmod(number, 85)
            digits = Z85[digit] + digits
        out += digits
    return out


def test_a_deletion_vector_names_its_file_by_the_uuid_it_codes() -> None:
    coded = "ab" + z85(bytes(range(16)))
    assert vector_file({"storageType": "u", "pathOrInlineDv": coded}) == (
        "ab/deletion_vector_00010203-0405-0607-0809-0a0b0c0d0e0f.bin"
    )
    assert vector_file({"storageType": "u", "pathOrInlineDv": z85(b"\xff" * 16)}) == (
        "deletion_vector_ffffffff-ffff-ffff-ffff-ffffffffffff.bin"
    )
    assert vector_file({"storageType": "i", "pathOrInlineDv": "xyz"}) == "inline"


def write_log(table: Path, commits: list[list[dict[str, object]]]) -> None:
    log = table / "_delta_log"
    log.mkdir(parents=True)
    for version, actions in enumerate(commits):
        lines = "\n".join(json.dumps(a) for a in actions)
        (log / f"{version:020d}.json").write_text(lines + "\n")


def test_the_log_replayed_gives_the_live_files_their_vectors_and_the_protocol(
    tmp_path: Path,
) -> None:
    table = tmp_path / "t"
    schema = {
        "type": "struct",
        "fields": [
            {
                "name": "id",
                "type": "integer",
                "metadata": {"delta.columnMapping.physicalName": "col-a"},
            },
            {
                "name": "product",
                "type": "string",
                "metadata": {"delta.columnMapping.physicalName": "col-b"},
            },
        ],
    }
    metadata = {
        "schemaString": json.dumps(schema),
        "configuration": {
            "delta.columnMapping.mode": "name",
            "delta.enableDeletionVectors": "true",
        },
    }
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": ["columnMapping", "deletionVectors"],
        "writerFeatures": ["columnMapping", "deletionVectors"],
    }
    vector = {"storageType": "u", "pathOrInlineDv": "00000000000000000000", "cardinality": 2}
    write_log(
        table,
        [
            [{"protocol": protocol}, {"metaData": metadata}],
            [{"add": {"path": "a.parquet"}}, {"add": {"path": "b.parquet"}}],
            [{"remove": {"path": "b.parquet"}}],
            [
                {"remove": {"path": "a.parquet"}},
                {"add": {"path": "a.parquet", "deletionVector": vector}},
            ],
        ],
    )
    columns = pa.table({"col-a": pa.array([1], pa.int32()), "col-x": ["gone"]})
    pq.write_table(columns, table / "a.parquet")
    log = replay(table)
    files = live_files(table, log)
    assert [(f.path, f.kind, f.file_group, f.instant) for f in files] == [
        ("a.parquet", "data", "a.parquet", f"{1:020d}"),
        (
            "deletion_vector_00000000-0000-0000-0000-000000000000.bin",
            "delete",
            "a.parquet",
            f"{3:020d}",
        ),
    ]
    assert files[0].columns == ("id [col-a] int", "[col-x, dropped] string")
    assert deletes_note(log) == "deletes: 1 deletion vector(s), 2 row(s) deleted"
    assert protocol_note(log) == (
        "Delta protocol: reader version 3 (columnMapping, deletionVectors), writer version 7 "
        "(columnMapping, deletionVectors); column mapping name, deletion vectors"
    )


def test_every_step_after_the_reference_is_a_version_the_change_data_feed_reads() -> None:
    # A schema change commits a version too (with no changes in it).
    instants = [("01", "1"), ("02", "2"), ("03", "3"), ("04", "4")]
    assert committed_states(instants, 1) == (2, 3)


def test_known_outcomes_and_version_points_name_a_column_mapping_mode(tmp_path: Path) -> None:
    assert in_range("name", "==name") and not in_range("id", "==name")
    assert not in_range("name", ">=1")
    path = tmp_path / "versions.yaml"
    path.write_text(
        "points:\n- {name: a, delta: {column_mapping: name}}\n"
        "- {name: b, delta: {release: 3.3.2, column_mapping: id}}\n"
    )
    points = load_versions(path).points
    assert points[1].releases() == {"delta": "3.3.2", "column_mapping": "id"}
    path.write_text("points:\n- {name: a, delta: {column_mapping: 'by name'}}\n- {name: b}\n")
    with pytest.raises(VersionsError, match="column_mapping"):
        load_versions(path)


class _Spark:
    """An engine whose Delta tables another release of it reads (Spark 4 for Delta 4)."""

    version = "3.5.9"
    formats = ("hudi", "iceberg", "delta")

    def version_reading(self, table_format: str) -> str:
        return "4.0.1" if table_format == "delta" else self.version


def test_run_json_names_the_spark_that_read_each_formats_tables() -> None:
    spark: Any = _Spark()
    assert reading_versions(spark, ("hudi", "iceberg", "delta")) == "3.5.9 (Delta: 4.0.1)"
    assert reading_versions(spark, ("delta",)) == "4.0.1"
    assert reading_versions(spark, ("hudi", "iceberg")) == "3.5.9"


def test_a_delta_release_without_a_known_spark_stops_the_run_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    args = ["run", "--formats", "delta", "--delta-version", "4.1.0", "--reports", str(reports)]
    assert main(args) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error == (
        "lakecompat: error: --delta-version 4.1.0: lakecompat runs Delta 3.x on its own Spark "
        "3.5 and Delta 4.0.x on Spark 4.0.1; no Spark is known here for Delta 4.1.0"
    )
    assert not reports.exists()
