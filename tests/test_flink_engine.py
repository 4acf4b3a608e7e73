"""Flink's reads as scripts, its answers as Arrow, and its errors as reasons (no JVM needed)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from lakecompat.engines.errors import QueryError
from lakecompat.engines.flink.reader import FlinkEngine, _failure_text, flink_type, to_arrow
from lakecompat.engines.table import TableRef

TABLE = TableRef(
    name="t_rename",
    path=Path("/data/t_rename"),
    table_type="mor",
    key="id",
    columns=(
        ("_hoodie_commit_time", "string"),
        ("id", "int"),
        ("region", "string"),
        ("price", "decimal(10,2)"),
    ),
    reference_instant=("20240102030405678", "20240102030406000"),
    partition_by=("region",),
)


@pytest.mark.parametrize(
    ("spark", "flink"),
    [
        ("int", "INT"),
        ("bigint", "BIGINT"),
        ("binary", "BYTES"),
        ("timestamp", "TIMESTAMP(6)"),
        ("decimal(10,2)", "DECIMAL(10,2)"),
        ("array<int>", "ARRAY<INT>"),
        ("map<string,array<int>>", "MAP<STRING, ARRAY<INT>>"),
        (
            "struct<a:int,b:struct<c:decimal(5,1),d:string>>",
            "ROW<`a` INT, `b` ROW<`c` DECIMAL(5,1), `d` STRING>>",
        ),
    ],
)
def test_spark_types_become_flink_sql_types(spark: str, flink: str) -> None:
    assert flink_type(spark) == flink


def test_a_type_without_flink_counterpart_is_a_query_error() -> None:
    with pytest.raises(QueryError, match="no Flink SQL type for the Spark type 'interval'"):
        flink_type("interval")


def engine() -> FlinkEngine:
    return FlinkEngine.__new__(FlinkEngine)  # read_sql needs no run context


def test_the_read_declares_the_data_columns_then_the_partition_columns() -> None:
    sql = engine().read_sql(TABLE, "snapshot")
    create, select = sql.split(";\n")
    assert "_hoodie_commit_time" not in create
    assert "`id` INT,\n  `price` DECIMAL(10,2),\n  `region` STRING\n)" in create
    assert "PARTITIONED BY (`region`)" in create
    assert "'path' = 'file:///data/t_rename'" in create
    assert "'table.type' = 'MERGE_ON_READ'" in create
    assert select == "SELECT * FROM `t_rename`"


def test_query_types_are_connector_options() -> None:
    read = engine().read_sql
    assert "'hoodie.datasource.query.type' = 'read_optimized'" in read(TABLE, "read_optimized")
    # The start commit is inclusive: the read begins right after the reference commit.
    assert "'read.start-commit' = '20240102030405679'" in read(TABLE, "incremental")
    travel = read(TABLE, "time_travel")
    assert "'read.start-commit' = 'earliest'" in travel
    assert "'read.end-commit' = '20240102030405678'" in travel


def test_answers_become_arrow_in_the_types_answers_compare_in() -> None:
    columns = [
        {"name": "id", "type": "INT", "root": "INTEGER"},
        {"name": "price", "type": "DECIMAL(10, 2)", "root": "DECIMAL"},
        {"name": "at", "type": "TIMESTAMP(6)", "root": "TIMESTAMP_WITHOUT_TIME_ZONE"},
        {"name": "day", "type": "DATE", "root": "DATE"},
        {"name": "raw", "type": "BYTES", "root": "VARBINARY"},
        {"name": "ratio", "type": "DOUBLE", "root": "DOUBLE"},
        {"name": "point", "type": "ROW<`y` INT, `x` INT>", "root": "ROW"},
    ]
    rows = [
        [1, "12.50", 1_704_164_645_120_000, 19724, "AAE=", "NaN", {"y": 2, "x": 1}],
        [2, None, None, None, None, 1.5, None],
    ]
    table = to_arrow(columns, rows)
    assert table.schema.field("price").type == pa.decimal128(10, 2)
    assert table.schema.field("at").type == pa.timestamp("us")
    first = table.to_pylist()[0]
    assert first["price"] == Decimal("12.50")
    assert first["at"] == dt.datetime(2024, 1, 2, 3, 4, 5, 120000)
    assert first["day"] == dt.date(2024, 1, 2)
    assert first["raw"] == b"\x00\x01"
    assert first["ratio"] != first["ratio"]  # NaN
    assert first["point"] == '{"x":1,"y":2}'
    assert table.to_pylist()[1]["point"] is None


def test_the_root_cause_leads_the_reason() -> None:
    failure = {
        "error": "org.apache.flink.table.api.ValidationException: Unable to create a source",
        "root": "java.lang.IllegalArgumentException: null",
        "trace": [
            "org.apache.hudi.common.util.ValidationUtils.checkArgument(ValidationUtils.java:33)",
            "org.apache.hudi.common.table.timeline.versioning.TimelineLayoutVersion.<init>(x:40)",
        ],
    }
    text = _failure_text(failure).splitlines()
    assert text[0] == (
        "java.lang.IllegalArgumentException (no message) at "
        "org.apache.hudi.common.table.timeline.versioning.TimelineLayoutVersion.<init>(x:40)"
    )
    assert text[1] == "in Flink: " + failure["error"]
