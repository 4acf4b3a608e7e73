"""What a table's live files hold: Hudi log block headers, file schemas, and the preconditions."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakecompat.harness.scenario.load import load_scenario
from lakecompat.harness.scenario.model import needs
from lakecompat.harness.writer.base import DataFile
from lakecompat.harness.writer.hudi.files import (
    HudiFileError,
    avro_type_name,
    live_files,
    log_blocks,
    parquet_columns,
)
from lakecompat.harness.writer.layout import describe, note, unlisted

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
SEED, DDL, UPSERT = "20260101000000001", "20260101000000002", "20260101000000003"
INSTANTS = [(SEED, SEED), (DDL, DDL), (UPSERT, UPSERT)]
OLD = ("id int", "name string", "v int", "ts long")
NEW = ("id int", "name string", "v float", "ts long")


def block(kind: int, header: dict[int, str], content: bytes = b"xyz") -> bytes:
    """A Hudi log block as HoodieLogFormatWriter lays it out (big-endian)."""
    head = struct.pack(">i", len(header))
    for key, value in header.items():
        raw = value.encode()
        head += struct.pack(">ii", key, len(raw)) + raw
    body = struct.pack(">ii", 1, kind) + head + struct.pack(">q", len(content)) + content
    body += struct.pack(">i", 0)  # an empty footer
    body += struct.pack(">q", 6 + 8 + len(body) + 8)  # the reverse pointer
    return b"#HUDI#" + struct.pack(">q", len(body)) + body


def avro_schema(fields: list[tuple[str, object]]) -> str:
    record = {"type": "record", "name": "r", "fields": [{"name": n, "type": t} for n, t in fields]}
    return json.dumps(record)


def scenario(scenario_id: str):
    return load_scenario(SCENARIOS / f"{scenario_id}.yaml", SCENARIOS).spec


def test_log_blocks_reads_each_data_and_delete_block(tmp_path: Path) -> None:
    schema = avro_schema([("_hoodie_commit_time", ["null", "string"]), ("id", "int")])
    data = block(3, {0: UPSERT, 2: schema}) + block(1, {0: "20260101000000004"})
    data += block(0, {0: "20260101000000005", 3: "0"})  # a rollback command: no rows
    path = tmp_path / ".f1_20260101000000003.log.1_0-1-1"
    path.write_bytes(data)
    assert log_blocks(path) == [(UPSERT, ("id int",)), ("20260101000000004", ())]


def test_log_blocks_names_the_file_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / ".f1.log.1_0-1-1"
    path.write_bytes(block(1, {0: UPSERT}) + b"garbage")
    with pytest.raises(HudiFileError, match=r"\.f1\.log\.1_0-1-1: no Hudi log block at byte"):
        log_blocks(path)
    path.write_bytes(block(3, {0: UPSERT, 2: "not json"}))
    with pytest.raises(HudiFileError, match=r"1_0-1-1: block at byte 0: a log block's schema"):
        log_blocks(path)


@pytest.mark.parametrize(
    ("avro", "expected"),
    [
        (["null", "long"], "long"),
        ({"type": "int", "logicalType": "date"}, "date"),
        (
            {"type": "fixed", "size": 5, "logicalType": "decimal", "precision": 10, "scale": 2},
            "decimal(10,2)",
        ),
        ({"type": "long", "logicalType": "timestamp-micros"}, "timestamp"),
        ({"type": "long", "logicalType": "local-timestamp-micros"}, "timestamp_ntz"),
        ("bytes", "binary"),
        (
            {"type": "record", "name": "p", "fields": [{"name": "x", "type": ["null", "int"]}]},
            "struct<x:int>",
        ),
        ({"type": "array", "items": ["null", "float"]}, "array<float>"),
        ({"type": "map", "values": "double"}, "map<string,double>"),
    ],
)
def test_avro_types_in_the_scenario_spelling(avro: object, expected: str) -> None:
    assert avro_type_name(avro) == expected


def test_parquet_columns_leave_out_hudi_meta_columns(tmp_path: Path) -> None:
    table = pa.table(
        {
            "_hoodie_commit_time": pa.array(["1"]),
            "id": pa.array([1], pa.int32()),
            "price": pa.array([1], pa.decimal128(10, 2)),
            "point": pa.array([{"x": 1}], pa.struct([("x", pa.int32())])),
            "tags": pa.array([[1]], pa.list_(pa.int64())),
            "attrs": pa.array([[("a", 1.5)]], pa.map_(pa.string(), pa.float64())),
            "day": pa.array([0], pa.date32()),
        }
    )
    path = tmp_path / "f1_0-1-1_20260101000000001.parquet"
    pq.write_table(table, path)
    assert parquet_columns(path) == (
        "id int",
        "price decimal(10,2)",
        "point struct<x:int>",
        "tags array<long>",
        "attrs map<string,double>",
        "day date",
    )


def test_live_files_reads_the_procedure_listing(tmp_path: Path) -> None:
    base = tmp_path / "fg1_0-1-1_20260101000000001.parquet"
    pq.write_table(pa.table({"id": pa.array([1], pa.int32())}), base)
    log = tmp_path / ".fg1_20260101000000003.log.1_0-2-2"
    log.write_bytes(block(3, {0: UPSERT, 2: avro_schema([("id", "long")])}))
    listing = f"[HoodieLogFile(pathStr=file:{log}, fileSize=10)]"
    row = {"partition": "", "file_id": "fg1", "data_file": f"file:{base}"}
    row |= {"delta_files_compaction_scheduled": "[]", "delta_files_compaction_unscheduled": listing}
    assert live_files([row], tmp_path) == [
        DataFile(base.name, "base", "fg1", SEED, ("id int",)),
        DataFile(log.name, "log", "fg1", UPSERT, ("id long",)),
    ]


def test_default_needs_follow_the_steps() -> None:
    assert needs(scenario("baseline/no_change")) == ()
    assert needs(scenario("rename_column/rename")) == ("old_files",)
    assert needs(scenario("type_change/int_to_float")) == ("old_files", "new_files")
    assert needs(scenario("schema_on_write/extra_column")) == ("old_files", "new_files")
    # Clustering rewrites every file group: the scenario is about reading the rewritten table.
    assert needs(scenario("merge_on_read/add_then_clustering")) == ("new_files",)


def test_an_upgrade_of_the_writer_needs_files_of_the_older_release() -> None:
    spec = scenario("writer_upgrade/rename_after_upgrade")  # seed, insert, upgrade, rename, upsert
    assert needs(spec) == ("old_files", "new_files", "older_writer_files")
    seed, insert, upgrade, rename, upsert = (f"2026010100000000{i}" for i in range(1, 6))
    instants = [(t, t) for t in (seed, insert, upgrade, rename, upsert)]
    upgrade_instants = [instants[0], instants[1], instants[1], instants[3], instants[4]]
    renamed = ("id int", "product string", "price double", "qty int", "ts long")
    old = ("id int", "name string", "price double", "qty int", "ts long")
    files = [
        DataFile("a.parquet", "base", "fg1", seed, old),
        DataFile("b.parquet", "base", "fg2", upsert, renamed),
    ]
    layout = describe(spec, files, upgrade_instants)
    assert layout["unmet"] == []
    assert layout["groups"][0]["written_by"] == "seed rows (Hudi 0.15.0)"
    assert layout["groups"][1]["written_by"] == "steps[3] upsert"
    # The steps after the upgrade rewrote every file group the older release wrote.
    layout = describe(spec, files[1:], upgrade_instants)
    assert layout["unmet"][-1].startswith("older_writer_files: no live file was written by")


def test_notes_follow_the_summary() -> None:
    layout = unlisted(scenario("rename_column/rename"), "gone")
    note(layout, "table version 9 after the steps")
    assert layout["summary"].splitlines()[-1] == "table version 9 after the steps"


def test_old_and_new_files_meet_the_preconditions() -> None:
    files = [
        DataFile("a.parquet", "base", "fg1", SEED, OLD),
        DataFile("b.parquet", "base", "fg2", SEED, OLD),
        DataFile("c.parquet", "base", "fg3", UPSERT, NEW),
    ]
    layout = describe(scenario("type_change/int_to_float"), files, INSTANTS)
    assert layout["unmet"] == []
    assert layout["file_groups"] == 3
    assert layout["summary"].splitlines() == [
        "3 file groups",
        "seed rows, before the schema change: 2 base files [id int, name string, v int, ts long]",
        "steps[1] upsert, after the schema change: 1 base file "
        "[id int, name string, v float, ts long]",
        "the scenario needs old_files and new_files: present",
    ]


def test_a_table_whose_only_file_group_was_rewritten_lacks_old_files() -> None:
    """One file group, rewritten by the upsert: no cell of this table would read an old file."""
    files = [DataFile("c.parquet", "base", "fg1", UPSERT, NEW)]
    layout = describe(scenario("type_change/int_to_float"), files, INSTANTS)
    assert layout["unmet"] == [
        "old_files: no live file was written before the schema change: the steps rewrote every "
        "file group that held the old schema"
    ]
    assert "missing: old_files" in layout["summary"]


def test_merge_on_read_logs_count_as_new_files() -> None:
    files = [
        DataFile("a.parquet", "base", "fg1", SEED, OLD),
        DataFile(".a.log.1", "log", "fg1", UPSERT, NEW),
    ]
    layout = describe(scenario("type_change/int_to_float"), files, INSTANTS)
    assert layout["unmet"] == []
    assert [(g["base"], g["log"], g["when"]) for g in layout["groups"]] == [
        (1, 0, "before the schema change"),
        (0, 1, "after the schema change"),
    ]


def test_files_that_cannot_be_listed_leave_a_need_unmet() -> None:
    layout = unlisted(scenario("rename_column/rename"), "HoodieException: no timeline")
    assert layout["unmet"] == ["the live files could not be listed: HoodieException: no timeline"]
    assert layout["summary"] == "the live files could not be listed: HoodieException: no timeline"
    assert unlisted(scenario("baseline/no_change"), "gone")["unmet"] == []
