"""Unit tests of the Hive engine's pure parts: registration DDL, result types and values."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from lakecompat.engines.hive.reader import _answer_columns, hive_arrow_type, to_arrow
from lakecompat.engines.metastore.ddl import registration_ddl
from lakecompat.engines.metastore.tables import INPUT_FORMAT, REALTIME_INPUT_FORMAT, hive_tables
from lakecompat.engines.table import TableRef

COLUMNS = (("_hoodie_commit_time", "string"), ("id", "int"), ("amount", "decimal(10,2)"))


def table(table_type: str, fmt: str = "hudi") -> TableRef:
    return TableRef("t_x", Path("/data/t_x"), table_type, "id", format=fmt, columns=COLUMNS)


def test_copy_on_write_is_one_table_with_the_hudi_input_format() -> None:
    drop, create = registration_ddl(table("cow"))
    assert drop == "DROP TABLE IF EXISTS `t_x`"
    assert create.startswith("CREATE EXTERNAL TABLE `t_x` (`_hoodie_commit_time` string, ")
    assert "`amount` decimal(10,2)" in create
    assert f"INPUTFORMAT '{INPUT_FORMAT}'" in create
    assert "LOCATION 'file:///data/t_x'" in create
    assert "'hoodie.query.as.ro.table'='false'" in create


def test_merge_on_read_is_registered_as_ro_and_rt_tables() -> None:
    statements = registration_ddl(table("mor"))
    creates = [s for s in statements if s.startswith("CREATE")]
    assert hive_tables(table("mor")) == {"read_optimized": "t_x_ro", "snapshot": "t_x_rt"}
    ro = next(s for s in creates if "`t_x_ro`" in s)
    rt = next(s for s in creates if "`t_x_rt`" in s)
    assert f"INPUTFORMAT '{INPUT_FORMAT}'" in ro and "'hoodie.query.as.ro.table'='true'" in ro
    assert f"INPUTFORMAT '{REALTIME_INPUT_FORMAT}'" in rt
    assert "'hoodie.query.as.ro.table'='false'" in rt
    assert all("LOCATION 'file:///data/t_x'" in s for s in creates)


def test_plain_parquet_control_table() -> None:
    _, create = registration_ddl(table("cow", fmt="parquet"))
    assert "STORED AS PARQUET" in create and "hudi" not in create


@pytest.mark.parametrize(
    ("code", "precision", "scale", "expected"),
    [
        ("INT_TYPE", None, None, pa.int32()),
        ("BIGINT_TYPE", None, None, pa.int64()),
        ("FLOAT_TYPE", None, None, pa.float32()),
        ("DOUBLE_TYPE", None, None, pa.float64()),
        ("STRING_TYPE", None, None, pa.string()),
        ("VARCHAR_TYPE", None, None, pa.string()),
        ("DATE_TYPE", None, None, pa.date32()),
        ("BOOLEAN_TYPE", None, None, pa.bool_()),
        ("DECIMAL_TYPE", 10, 2, pa.decimal128(10, 2)),
        ("INTERVAL_DAY_TIME_TYPE", None, None, pa.string()),
        ("TIMESTAMP_TYPE", None, None, pa.timestamp("us")),
        ("TIMESTAMPLOCALTZ_TYPE", None, None, pa.timestamp("us", tz="UTC")),
        ("BINARY_TYPE", None, None, pa.binary()),
    ],
)
def test_result_types(
    code: str, precision: int | None, scale: int | None, expected: pa.DataType
) -> None:
    assert hive_arrow_type(code, precision, scale) == expected


def test_values_are_converted_to_the_answer_types() -> None:
    answer = to_arrow(
        [("day", pa.date32()), ("amount", pa.decimal128(10, 2)), ("tags", pa.string())],
        [("2024-02-29", Decimal("1.50"), '{"a":1}'), (None, None, None)],
    )
    assert answer.to_pylist() == [
        {"day": dt.date(2024, 2, 29), "amount": Decimal("1.50"), "tags": '{"a":1}'},
        {"day": None, "amount": None, "tags": None},
    ]


def test_nested_json_from_hiveserver2_becomes_canonical() -> None:
    table = to_arrow(
        [("p", pa.string()), ("name", pa.string())],
        [('{"y":2,"x":1}', "a"), (None, None)],
        nested=frozenset({"p"}),
    )
    assert table.column("p").to_pylist() == ['{"x":1,"y":2}', None]
    assert table.column("name").to_pylist() == ["a", None]


def test_partitioned_tables_get_partition_keys_and_partitions() -> None:
    columns = (("id", "int"), ("name", "string"), ("region", "string"))
    ref = TableRef(
        "t_p_cow",
        Path("/data/t_p_cow"),
        "cow",
        "id",
        columns=columns,
        partition_by=("region",),
        partitions=("region=eu", "region=us"),
    )
    drop, create, *partitions = registration_ddl(ref)
    assert drop == "DROP TABLE IF EXISTS `t_p_cow`"
    assert "(`id` int, `name` string) PARTITIONED BY (`region` string)" in create
    assert partitions == [
        "ALTER TABLE `t_p_cow` ADD PARTITION (`region`='eu') LOCATION 'file:///data/t_p_cow/region=eu'",
        "ALTER TABLE `t_p_cow` ADD PARTITION (`region`='us') LOCATION 'file:///data/t_p_cow/region=us'",
    ]


def test_timestamps_sent_as_text_and_binary_become_arrow_values() -> None:
    answer = to_arrow(
        [("t", pa.timestamp("us")), ("z", pa.timestamp("us", tz="UTC")), ("b", pa.binary())],
        [
            ("2024-01-02 03:04:05.1", "2024-01-02 04:04:05.123456 Europe/Paris", b"abc"),
            ("2024-01-02 03:04:05", None, "abc"),
            (None, None, None),
        ],
    )
    assert answer.column("t").to_pylist() == [
        dt.datetime(2024, 1, 2, 3, 4, 5, 100000),
        dt.datetime(2024, 1, 2, 3, 4, 5),
        None,
    ]
    assert answer.column("z").to_pylist()[0] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456, dt.UTC)
    assert answer.column("b").to_pylist() == [b"abc", b"abc", None]


def test_timestamp_ntz_columns_are_registered_as_hive_timestamps() -> None:
    table = TableRef(
        "t",
        Path("/data/t"),
        "cow",
        "id",
        columns=(("id", "int"), ("at", "timestamp_ntz"), ("s", "struct<x:timestamp_ntz>")),
    )
    create = registration_ddl(table)[1]
    assert "`at` timestamp, `s` struct<x:timestamp>)" in create


def _metadata_cursor(columns: list[tuple[str, str]]) -> Any:
    """A PyHive cursor whose HiveServer2 describes its result columns as HiveServer2 does:
    every column, nested or not, with a primitive type entry of its type code."""
    from TCLIService import ttypes

    descriptions = [
        ttypes.TColumnDesc(
            columnName=name,
            typeDesc=ttypes.TTypeDesc(
                types=[
                    ttypes.TTypeEntry(
                        primitiveEntry=ttypes.TPrimitiveTypeEntry(
                            type=ttypes.TTypeId._NAMES_TO_VALUES[code]
                        )
                    )
                ]
            ),
            position=index,
        )
        for index, (name, code) in enumerate(columns)
    ]
    response = ttypes.TGetResultSetMetadataResp(schema=ttypes.TTableSchema(columns=descriptions))
    client = SimpleNamespace(GetResultSetMetadata=lambda request: response)
    return SimpleNamespace(_operationHandle=None, _connection=SimpleNamespace(client=client))


def test_array_map_and_struct_columns_are_read_as_json_to_make_canonical() -> None:
    """HiveServer2 sends a struct's fields in its declared order and a map's entries in its
    own order: the answer compares only once the JSON is canonical."""
    cursor = _metadata_cursor(
        [("id", "INT_TYPE"), ("items", "ARRAY_TYPE"), ("attrs", "MAP_TYPE"), ("p", "STRUCT_TYPE")]
    )
    columns, nested = _answer_columns(cursor)
    assert columns == [
        ("id", pa.int32()),
        ("items", pa.string()),
        ("attrs", pa.string()),
        ("p", pa.string()),
    ]
    assert nested == {"items", "attrs", "p"}
    row = (1, '[{"sku":"a","qty":1}]', '{"k7":{"v":6},"k6":null}', '{"y":2,"x":1}')
    assert to_arrow(columns, [row], nested).to_pylist() == [
        {
            "id": 1,
            "items": '[{"qty":1,"sku":"a"}]',
            "attrs": '{"k6":null,"k7":{"v":6}}',
            "p": '{"x":1,"y":2}',
        }
    ]
