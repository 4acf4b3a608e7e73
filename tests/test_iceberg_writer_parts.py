"""The Iceberg writer's pure parts: statements, which scenarios have no Iceberg table, the
current snapshot and the live files read from a table's metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import SCENARIOS

from lakecompat.engines.spark.runtime import iceberg_catalog_name
from lakecompat.harness.run.plan import format_tables
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.oracle import evolve
from lakecompat.harness.scenario.shapes import shapes_for
from lakecompat.harness.scenario.types import parse_type
from lakecompat.harness.writer import layout
from lakecompat.harness.writer.hudi.writer import HudiWriter
from lakecompat.harness.writer.iceberg.files import (
    appended_states,
    current_snapshot,
    delete_files_note,
    live_files,
    moment_after,
    snapshot_log,
)
from lakecompat.harness.writer.iceberg.statements import (
    create_statement,
    delete_statement,
    merge_statement,
    not_applicable,
    table_identifier,
    table_properties,
)
from lakecompat.harness.writer.spark_sql import ddl
from lakecompat.harness.writer.table_files import TableFileError


def test_the_table_type_sets_how_deletes_updates_and_merges_are_written() -> None:
    assert table_properties("mor", "2") == {
        "format-version": "2",
        "write.delete.mode": "merge-on-read",
        "write.update.mode": "merge-on-read",
        "write.merge.mode": "merge-on-read",
    }
    assert set(table_properties("cow", "3").values()) == {"3", "copy-on-write"}


def test_statements_name_the_table_through_its_folders_catalog(tmp_path: Path) -> None:
    catalog = iceberg_catalog_name(tmp_path / "run")
    assert catalog == iceberg_catalog_name(tmp_path / "run" / ".." / "run")
    assert catalog != iceberg_catalog_name(tmp_path / "other")
    identifier = table_identifier(catalog, "tables", "t_a_cow")
    assert identifier == f"{catalog}.`tables`.`t_a_cow`"
    create = create_statement(identifier, [("id", "INT"), ("day", "DATE")], ["day"], {"a": "b"})
    assert create == (
        f"CREATE TABLE {identifier} (`id` INT, `day` DATE) USING iceberg PARTITIONED BY (`day`) "
        "TBLPROPERTIES ('a'='b')"
    )
    rename = sc.RenameColumn(op="rename_column", column="name", to="product")
    assert ddl("t", rename, identifier=identifier) == (
        f"ALTER TABLE {identifier} RENAME COLUMN `name` TO `product`"
    )
    widen = sc.ChangeType(op="change_type", column="qty", to=parse_type("long"))
    assert ddl("t", widen, identifier=identifier).endswith("ALTER COLUMN `qty` TYPE BIGINT")


def test_an_upsert_keeps_the_stored_row_when_its_ordering_value_is_newer() -> None:
    merge = merge_statement("t", "id", "ts")
    assert "ON t.`id` = s.`id`" in merge
    assert "WHEN MATCHED AND (s.`ts` IS NULL OR t.`ts` IS NULL OR s.`ts` >= t.`ts`)" in merge
    assert merge.endswith("WHEN NOT MATCHED THEN INSERT *")
    assert delete_statement("t", "id") == (
        "DELETE FROM t WHERE `id` IN (SELECT `id` FROM lakecompat_rows)"
    )
    # Without an ordering field the later write wins, as the oracle has it then.
    assert "WHEN MATCHED THEN UPDATE SET *" in merge_statement("t", "id", None)


def test_only_scenarios_with_hudi_only_steps_have_no_iceberg_table() -> None:
    reasons = {s.id: not_applicable(s.spec) for s in load_scenarios(SCENARIOS)}
    assert reasons["rename_column/rename"] is None
    assert reasons["drop_column/drop_then_readd"] is None
    assert "Hudi table service" in (reasons["merge_on_read/add_then_clustering"] or "")
    assert "upgrades the Hudi writer" in (reasons["writer_upgrade/rename_after_upgrade"] or "")
    with_settings = [i for i, r in reasons.items() if r and "sets Hudi writer options" in r]
    assert with_settings, reasons
    # Most of the catalog runs on Iceberg as it is.
    assert sum(r is None for r in reasons.values()) > len(reasons) * 0.7


def metadata(table: Path, document: dict[str, object], version: int = 3) -> None:
    folder = table / "metadata"
    folder.mkdir(parents=True)
    (folder / "version-hint.text").write_text(f"{version}\n")
    (folder / f"v{version}.metadata.json").write_text(json.dumps(document))


def test_the_current_snapshot_is_its_sequence_number_and_id(tmp_path: Path) -> None:
    table = tmp_path / "t"
    snapshots = [
        {"snapshot-id": 11, "sequence-number": 1},
        {"snapshot-id": 22, "sequence-number": 12},
    ]
    metadata(table, {"current-snapshot-id": 22, "snapshots": snapshots})
    assert current_snapshot(table) == ("000000000012", "22")
    # Sequence numbers sort as text the way they sort as numbers.
    assert current_snapshot(table)[0] > "000000000002"  # type: ignore[index]
    empty = tmp_path / "empty"
    metadata(empty, {"current-snapshot-id": -1, "snapshots": []})
    assert current_snapshot(empty) is None
    with pytest.raises(TableFileError, match=r"missing/metadata: no current Iceberg metadata"):
        current_snapshot(tmp_path / "missing")


def test_appends_and_the_moment_of_the_reference_come_from_the_snapshot_log(
    tmp_path: Path,
) -> None:
    table = tmp_path / "t"

    def snapshot(number: int, at: int, operation: str) -> dict[str, object]:
        summary = {"operation": operation}
        return {"snapshot-id": number, "timestamp-ms": at, "summary": summary}

    snapshots = [
        snapshot(11, 1_795_000_000_000, "append"),  # the seed rows: the reference
        snapshot(22, 1_795_000_001_000, "append"),
        snapshot(33, 1_795_000_002_001, "overwrite"),
    ]
    metadata(table, {"current-snapshot-id": 33, "snapshots": snapshots})
    log = snapshot_log(table)
    assert log["22"] == (1_795_000_001_000, "append")
    # State 1 is a schema change (no snapshot), 2 appended, 3 overwrote.
    instants = [("1", "11"), ("1", "11"), ("2", "22"), ("3", "33")]
    assert appended_states(instants, 0, log) == (2,)
    assert appended_states(instants, 2, log) == ()
    # Halfway between the reference's commit and the next snapshot's, in UTC.
    assert moment_after(instants, 0, log) == "2026-11-18 11:06:40.500"
    assert moment_after(instants, 2, log) == "2026-11-18 11:06:41.500"
    assert moment_after(instants, 3, log) == "2026-11-18 11:06:42.001"  # none after it
    assert moment_after([None, *instants], 0, log) is None


def test_live_files_are_data_and_delete_files_with_their_schemas(tmp_path: Path) -> None:
    table = tmp_path / "t"
    data = table / "data"
    data.mkdir(parents=True)
    old = data / "00000-1-a.parquet"
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}), old)
    new = data / "00001-2-b.parquet"
    pq.write_table(pa.table({"id": pa.array([2], pa.int32()), "product": ["b"]}), new)
    gone = data / "00000-0-c.parquet"

    def entry(status: int, number: int, content: int, path: Path, **extra: object) -> dict:
        return {
            "status": status,
            "sequence_number": number,
            "data_file": {"content": content, "file_path": f"file:{path}", **extra},
        }

    rows = [
        entry(0, 1, 0, old),
        entry(1, 3, 0, new),
        entry(2, 2, 0, gone),  # deleted by the current snapshot: not live
        entry(1, 3, 1, data / "00001-2-deletes.parquet", referenced_data_file=f"file:{old}"),
    ]
    found = live_files(rows, table)
    assert [(f.path, f.kind, f.file_group, f.instant, f.columns) for f in found] == [
        ("data/00000-1-a.parquet", "data", "data/00000-1-a.parquet", "000000000001",
         ("id int", "name string")),
        ("data/00001-2-b.parquet", "data", "data/00001-2-b.parquet", "000000000003",
         ("id int", "product string")),
        ("data/00001-2-deletes.parquet", "delete", "data/00000-1-a.parquet", "000000000003", ()),
    ]  # fmt: skip
    spec = load_scenarios(SCENARIOS, "rename_column/then_upsert")[0].spec
    instants = [("000000000001", "1"), ("000000000001", "1"), ("000000000003", "3")]
    described = layout.describe(spec, found, instants)
    assert described["summary"].splitlines() == [
        "2 data files",
        "seed rows, before the schema change: 1 data file [id int, name string]",
        "steps[1] upsert, after the schema change: 1 delete file [deletes only]",
        "steps[1] upsert, after the schema change: 1 data file [id int, product string]",
        "the scenario needs old_files and new_files: present",
    ]


def test_partition_evolution_is_an_alter_table_of_iceberg_and_no_hudi_table() -> None:
    scenarios = {s.id: s for s in load_scenarios(SCENARIOS)}
    replaced = scenarios["keys_partitions/partition_evolution_replace_field"]
    drop, add = replaced.spec.steps[:2]
    assert ddl("t", drop) == "ALTER TABLE `t` DROP PARTITION FIELD `region`"
    added = ddl("t", add, identifier="c.`n`.`t`")
    assert added == "ALTER TABLE c.`n`.`t` ADD PARTITION FIELD `name`"
    assert not_applicable(replaced.spec) is None
    assert evolve(replaced.spec)[-1].partition_by == ["name"]
    assert "partition fields are fixed" in (HudiWriter.not_applicable(replaced) or "")
    assert HudiWriter.not_applicable(scenarios["rename_column/rename"]) is None
    # The run leaves the scenario out of the Hudi tables and writes it as an Iceberg table.
    chosen = [replaced, scenarios["rename_column/rename"]]
    planned = {(s.id, f) for s, _, f in format_tables(chosen, ("cow",), ("hudi", "iceberg"))}
    assert (replaced.id, "hudi") not in planned and (replaced.id, "iceberg") in planned


def test_a_filter_on_a_new_partition_field_is_among_the_shapes() -> None:
    scenarios = {s.id: s for s in load_scenarios(SCENARIOS)}
    added = scenarios["keys_partitions/partition_evolution_add_field"]
    shapes = {shape.name: shape for shape in shapes_for(added.spec)}
    assert shapes["partition"].predicate is not None
    assert shapes["partition"].predicate.column == "region"
    assert shapes["filter"].predicate is not None and shapes["filter"].predicate.column == "region"
    assert "region" in shapes["project"].columns


def test_the_evidence_says_which_kind_of_delete_files_a_table_has() -> None:
    assert delete_files_note(["data/a-deletes.puffin", "data/a-deletes.puffin"]) == (
        "deletes: 2 deletion vector(s) in Puffin files"
    )
    assert delete_files_note(["data/b-deletes.parquet"]) == "deletes: 1 position-delete file(s)"
