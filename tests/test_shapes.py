"""Query shapes: which shapes a scenario's tables get, and the oracle's answer for each, on
tables with rows in files written before and after the change."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa

from lakecompat.engines.shape import COUNT_COLUMN, HIVE, SPARK, TRINO, Shape, shape_sql
from lakecompat.harness.scenario.model import ScenarioSpec
from lakecompat.harness.scenario.shapes import (
    change_of,
    changes,
    expected_shape,
    shapes_for,
    written_before,
)

SCHEMA = [
    {"name": "id", "type": "int"},
    {"name": "name", "type": "string"},
    {"name": "price", "type": "float"},
    {"name": "qty", "type": "int"},
    {"name": "region", "type": "string"},
    {"name": "ts", "type": "long"},
]
ROWS = [
    {"id": 1, "name": "apple", "price": 1.5, "qty": 10, "region": "eu", "ts": 100},
    {"id": 2, "name": "banana", "price": 0.25, "qty": 20, "region": "us", "ts": 100},
    {"id": 3, "name": "cherry", "price": 1.5, "qty": 30, "region": "eu", "ts": 100},
]


def spec(*steps: dict[str, Any], **fields: Any) -> ScenarioSpec:
    data = {
        "title": "t",
        "key": "id",
        "formats": {"hudi": {"ordering": "ts"}},
        "schema": SCHEMA,
        "rows": ROWS,
    }
    return ScenarioSpec.model_validate({**data, **fields, "steps": list(steps)})


def by_name(scenario: ScenarioSpec) -> dict[str, Shape]:
    return {shape.name: shape for shape in shapes_for(scenario)}


def rows(scenario: ScenarioSpec, shape: Shape, table_type: str = "cow") -> list[dict[str, Any]]:
    return expected_shape(scenario, table_type, "snapshot", shape).to_pylist()


#: price widened from float to double, then one old row rewritten and a new one written: rows
#: 2 and 3 stay in the file written as float.
WIDENED = spec(
    {"op": "change_type", "column": "price", "to": "double"},
    {
        "op": "upsert",
        "rows": [
            {"id": 1, "name": "apple", "price": 2.5, "qty": 11, "region": "eu", "ts": 200},
            {"id": 4, "name": "date", "price": 1.5, "qty": 40, "region": "asia", "ts": 200},
        ],
    },
)


def test_a_widened_column_gets_every_shape_with_old_values_in_its_predicates() -> None:
    shapes = by_name(WIDENED)
    assert list(shapes) == ["all", "project", "filter", "range", "count"]
    assert shapes["project"].columns == ("id", "price")
    (change,) = changes(WIDENED)
    assert (change.column, change.what) == ("price", "changed from float to double")
    equal = shapes["filter"].predicate
    assert equal is not None and equal.describe() == "price = 1.5"
    # 1.5 is the old row 3's value (row 1's old value was overwritten by 2.5)
    assert shapes["range"].predicate.describe() == "price BETWEEN 0.25 AND 2.5"  # type: ignore[union-attr]
    assert change_of(WIDENED, shapes["filter"]) == change
    assert written_before(WIDENED, change) == {2, 3}


def test_the_oracle_answers_each_shape_from_old_and_new_files() -> None:
    shapes = by_name(WIDENED)
    assert [r["id"] for r in rows(WIDENED, shapes["all"])] == [1, 2, 3, 4]
    assert rows(WIDENED, shapes["project"]) == [
        {"id": 1, "price": 2.5},
        {"id": 2, "price": 0.25},
        {"id": 3, "price": 1.5},
        {"id": 4, "price": 1.5},
    ]
    # The equality selects an old row (3, written as float) and a new one (4).
    assert [(r["id"], r["price"]) for r in rows(WIDENED, shapes["filter"])] == [(3, 1.5), (4, 1.5)]
    assert [r["id"] for r in rows(WIDENED, shapes["range"])] == [1, 2, 3, 4]
    assert rows(WIDENED, shapes["count"]) == [{COUNT_COLUMN: 2}]
    counted = expected_shape(WIDENED, "cow", "snapshot", shapes["count"])
    assert counted.schema.field(COUNT_COLUMN).type == pa.int64()


def test_a_renamed_column_is_filtered_by_its_new_name_with_its_old_values() -> None:
    renamed = spec({"op": "rename_column", "column": "name", "to": "product"})
    shapes = by_name(renamed)
    assert shapes["project"].columns == ("id", "product")
    assert shapes["filter"].predicate.describe() == "product = 'apple'"  # type: ignore[union-attr]
    assert change_of(renamed, shapes["filter"]).what == "renamed from name"  # type: ignore[union-attr]
    assert [r["id"] for r in rows(renamed, shapes["filter"])] == [1]
    assert rows(renamed, shapes["count"]) == [{COUNT_COLUMN: 1}]


def test_an_added_column_is_filtered_for_null_which_only_old_rows_hold() -> None:
    added = spec(
        {"op": "add_column", "column": {"name": "note", "type": "string"}},
        {
            "op": "upsert",
            "rows": [
                {"id": 4, "name": "d", "price": 1.0, "qty": 4, "region": "eu", "note": "x", "ts": 2}
            ],
        },
    )
    shapes = by_name(added)
    assert shapes["filter"].predicate.describe() == "note IS NULL"  # type: ignore[union-attr]
    assert "range" not in shapes
    assert [r["id"] for r in rows(added, shapes["filter"])] == [1, 2, 3]
    assert rows(added, shapes["count"]) == [{COUNT_COLUMN: 3}]


def test_a_dropped_then_re_added_column_is_the_filter_and_its_neighbour_is_projected() -> None:
    readded = spec(
        {"op": "drop_column", "column": "qty"},
        {"op": "add_column", "column": {"name": "qty", "type": "int"}},
    )
    found = {c.column: c for c in changes(readded)}
    assert found["region"].what == "now in the place of dropped qty"
    assert found["qty"].what == "added"
    shapes = by_name(readded)
    assert shapes["project"].columns == ("id", "region", "qty")
    # The old files' qty values (10, 20, 30) belong to the dropped column: none may match.
    assert shapes["filter"].predicate.describe() == "qty IS NULL"  # type: ignore[union-attr]
    assert len(rows(readded, shapes["filter"])) == 3


def test_a_partitioned_table_gets_a_partition_filter() -> None:
    partitioned = spec(
        {"op": "change_type", "column": "qty", "to": "long"}, partition_by=["region"]
    )
    shapes = by_name(partitioned)
    assert shapes["partition"].predicate.describe() == "region = 'eu'"  # type: ignore[union-attr]
    assert [r["id"] for r in rows(partitioned, shapes["partition"])] == [1, 3]


def test_a_merge_on_read_table_is_filtered_in_its_merged_rows() -> None:
    shapes = by_name(WIDENED)
    merged = expected_shape(WIDENED, "mor", "snapshot", shapes["filter"]).to_pylist()
    assert [r["id"] for r in merged] == [3, 4]
    base = expected_shape(WIDENED, "mor", "read_optimized", shapes["filter"]).to_pylist()
    # The base files still hold row 1 as first written (1.5): the log's update is not in them.
    assert [r["id"] for r in base] == [1, 3, 4]


def test_decimal_values_compare_exactly_and_unchanged_tables_get_only_all() -> None:
    widened = spec(
        {"op": "change_type", "column": "price", "to": "decimal(12,4)"},
        schema=[*SCHEMA[:2], {"name": "price", "type": "decimal(6,2)"}, *SCHEMA[3:]],
    )
    equal = by_name(widened)["filter"].predicate
    assert equal is not None and equal.values == (Decimal("1.5000"),)
    assert [r["id"] for r in rows(widened, by_name(widened)["filter"])] == [1, 3]
    assert [s.name for s in shapes_for(spec())] == ["all"]


def test_each_dialect_spells_the_shapes_as_its_users_write_them() -> None:
    shapes = by_name(WIDENED)
    spark_read = (
        "CREATE OR REPLACE TEMPORARY VIEW `t_snapshot` USING hudi;\nSELECT * FROM `t_snapshot`"
    )
    assert shape_sql(spark_read, shapes["filter"], SPARK) == (
        "CREATE OR REPLACE TEMPORARY VIEW `t_snapshot` USING hudi;\n"
        "SELECT * FROM `t_snapshot` WHERE `price` = 1.5"
    )
    assert shape_sql('SELECT * FROM "t"', shapes["project"], TRINO) == (
        'SELECT "id", "price" FROM "t"'
    )
    assert shape_sql("SELECT * FROM `t`", shapes["count"], HIVE) == (
        "SELECT count(*) AS `count` FROM `t` WHERE `price` = 1.5"
    )
    assert shape_sql("SELECT * FROM t", shapes["range"], TRINO) == (
        'SELECT * FROM t WHERE "price" BETWEEN 0.25 AND 2.5'
    )
    assert shape_sql("SELECT * FROM t", shapes["all"], HIVE) == "SELECT * FROM t"


def test_literals_of_every_filterable_type() -> None:
    import datetime as dt

    assert SPARK.literal("it's a\\b", "string") == "'it''s a\\\\b'"
    assert TRINO.literal("it's a\\b", "string") == "'it''s a\\b'"
    assert SPARK.literal(Decimal("7.00"), "decimal(6,2)") == "7.00"
    assert TRINO.literal(dt.date(2024, 1, 2), "date") == "DATE '2024-01-02'"
    moment = dt.datetime(2024, 1, 2, 3, 4, 5)
    assert SPARK.literal(moment, "timestamp_ntz") == "TIMESTAMP_NTZ '2024-01-02 03:04:05'"
    assert HIVE.literal(moment, "timestamp_ntz") == "TIMESTAMP '2024-01-02 03:04:05'"
    assert HIVE.literal(True, "boolean") == "TRUE"
    assert TRINO.literal(0.1, "double") == "0.1"
    assert TRINO.literal(5000000000, "long") == "5000000000"


def test_a_widened_field_inside_a_struct_is_filtered_by_its_path() -> None:
    nested = ScenarioSpec.model_validate(
        {
            "title": "t",
            "key": "id",
            "formats": {"hudi": {"ordering": "ts"}},
            "schema": [
                {"name": "id", "type": "int"},
                {"name": "point", "type": "struct<x:int,y:int>"},
                {"name": "ts", "type": "long"},
            ],
            "rows": [
                {"id": 1, "point": {"x": 1, "y": 2}, "ts": 1},
                {"id": 2, "point": {"x": 3, "y": 4}, "ts": 1},
                {"id": 3, "point": None, "ts": 1},
            ],
            "steps": [
                {"op": "rename_column", "column": "point.x", "to": "px"},
                {"op": "change_type", "column": "point.px", "to": "long"},
                {"op": "upsert", "rows": [{"id": 4, "point": {"px": 1, "y": 0}, "ts": 2}]},
            ],
        }
    )
    shapes = by_name(nested)
    assert shapes["project"].columns == ("id", "point")
    equal = shapes["filter"].predicate
    assert equal is not None and equal.nested and equal.path == ("point", "px")
    assert equal.describe() == "point.px = 1"
    assert equal.sql(SPARK) == "`point`.`px` = 1"
    assert equal.sql(TRINO) == '"point"."px" = 1'
    # Row 1 (old file) and row 4 (new file); row 3's NULL struct has no px.
    assert [r["id"] for r in rows(nested, shapes["filter"])] == [1, 4]
    change = change_of(nested, shapes["filter"])
    assert change is not None and change.what == "changed from int to long"
    assert written_before(nested, change) == {1, 2, 3}
