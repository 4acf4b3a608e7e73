"""The oracle: the table every kind of step must leave behind, for snapshot and read-optimized."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from harness.oracle import evolve, expected
from harness.scenario import ScenarioSpec

SCHEMA = [
    {"name": "id", "type": "int"},
    {"name": "name", "type": "string"},
    {"name": "qty", "type": "int"},
    {"name": "ts", "type": "long"},
]
ROWS = [
    {"id": 1, "name": "apple", "qty": 10, "ts": 100},
    {"id": 2, "name": "banana", "qty": 20, "ts": 100},
    {"id": 3, "name": "cherry", "qty": 30, "ts": 100},
]
NEW_ROW = {"id": 4, "name": "date", "qty": 40, "ts": 200}
TEMPLATES = {r["id"]: r for r in [*ROWS, NEW_ROW]}
BASE_TYPES = {"id": pa.int32(), "name": pa.string(), "qty": pa.int32(), "ts": pa.int64()}


def spec(*steps: dict[str, Any], **fields: Any) -> ScenarioSpec:
    """A scenario on the fruit table (or `schema`/`rows` given) with these steps."""
    data = {"title": "t", "key": "id", "precombine": "ts", "schema": SCHEMA, "rows": ROWS}
    return ScenarioSpec.model_validate({**data, **fields, "steps": list(steps)})


def snapshot(scenario: ScenarioSpec, table_type: str = "cow") -> pa.Table:
    return expected(scenario, table_type, "snapshot")


def read_optimized(scenario: ScenarioSpec, table_type: str = "mor") -> pa.Table:
    return expected(scenario, table_type, "read_optimized")


def column(table: pa.Table, name: str) -> list[Any]:
    return table.column(name).to_pylist()


def fields(table: pa.Table) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in table.schema]


def row(key: int, **values: Any) -> dict[str, Any]:
    """A seed row (or, for key 4, a new one) of the fruit table with `values` changed or added."""
    return {**TEMPLATES[key], **values}


def upsert(*rows: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"op": "upsert", "rows": list(rows), **extra}


def add_column(name: str, type_: str, **where: Any) -> dict[str, Any]:
    return {"op": "add_column", "column": {"name": name, "type": type_}, **where}


def test_seed_rows_only() -> None:
    table = snapshot(spec())
    assert fields(table) == list(BASE_TYPES.items())
    assert table.to_pylist() == ROWS


def test_rows_come_out_sorted_by_key() -> None:
    table = snapshot(spec(rows=list(reversed(ROWS))))
    assert column(table, "id") == [1, 2, 3]


def test_evolve_gives_one_independent_state_per_step() -> None:
    states = evolve(spec(add_column("note", "string"), {"op": "drop_column", "column": "qty"}))
    assert len(states) == 3
    assert [s.schema.names for s in states] == [
        ["id", "name", "qty", "ts"],
        ["id", "name", "qty", "ts", "note"],
        ["id", "name", "ts", "note"],
    ]
    assert states[0].rows[1] == ROWS[0]  # later steps did not change the earlier snapshot


@pytest.mark.parametrize(
    ("where", "names"),
    [
        ({}, ["id", "name", "qty", "ts", "note"]),
        ({"after": "name"}, ["id", "name", "note", "qty", "ts"]),
        ({"first": True}, ["note", "id", "name", "qty", "ts"]),
    ],
    ids=["end", "after", "first"],
)
def test_add_column_position_and_existing_rows_null(
    where: dict[str, Any], names: list[str]
) -> None:
    table = snapshot(spec(add_column("note", "string", **where)))
    assert fields(table) == [(n, BASE_TYPES.get(n, pa.string())) for n in names]
    assert column(table, "note") == [None, None, None]
    assert column(table, "name") == ["apple", "banana", "cherry"]


def test_add_column_then_upsert_fills_only_written_rows() -> None:
    table = snapshot(
        spec(add_column("discount", "double"), upsert(row(1, discount=5.0), row(4, discount=10.0)))
    )
    assert fields(table)[-1] == ("discount", pa.float64())
    assert column(table, "id") == [1, 2, 3, 4]
    assert column(table, "discount") == [5.0, None, None, 10.0]


def test_upsert_may_omit_a_column_which_reads_null() -> None:
    table = snapshot(spec(upsert({"id": 4, "name": "date", "ts": 200})))
    assert table.to_pylist()[-1] == {"id": 4, "name": "date", "qty": None, "ts": 200}


def test_drop_column_is_gone() -> None:
    table = snapshot(spec({"op": "drop_column", "column": "qty"}))
    assert table.column_names == ["id", "name", "ts"]
    assert all("qty" not in r for r in table.to_pylist())


def test_drop_then_readd_same_name_starts_null() -> None:
    table = snapshot(
        spec(
            {"op": "drop_column", "column": "qty"},
            add_column("qty", "string"),
            upsert(row(4, qty="forty")),
        )
    )
    assert fields(table)[-1] == ("qty", pa.string())
    assert column(table, "qty") == [None, None, None, "forty"]


def test_rename_keeps_values_under_new_name_in_place() -> None:
    table = snapshot(spec({"op": "rename_column", "column": "name", "to": "product"}))
    assert table.column_names == ["id", "product", "qty", "ts"]
    assert column(table, "product") == ["apple", "banana", "cherry"]


def test_rename_then_upsert_uses_new_name() -> None:
    table = snapshot(
        spec(
            {"op": "rename_column", "column": "name", "to": "product"},
            upsert(
                {"id": 1, "product": "green apple", "qty": 11, "ts": 200},
                {"id": 4, "product": "date", "qty": 40, "ts": 200},
            ),
        )
    )
    assert column(table, "product") == ["green apple", "banana", "cherry", "date"]
    assert column(table, "qty") == [11, 20, 30, 40]


@pytest.mark.parametrize(
    ("source", "values", "target", "arrow", "converted"),
    [
        ("int", [10, -5], "long", pa.int64(), [10, -5]),
        ("int", [10, -5], "string", pa.string(), ["10", "-5"]),
        ("double", [1.5, 2.257], "decimal(10,2)", pa.decimal128(10, 2), ["1.50", "2.26"]),
        ("string", ["12", "abc"], "int", pa.int32(), [12, None]),
    ],
    ids=["int-long", "int-string", "double-decimal", "string-int"],
)
def test_change_type_converts_existing_values(
    source: str, values: list[Any], target: str, arrow: pa.DataType, converted: list[Any]
) -> None:
    scenario = spec(
        {"op": "change_type", "column": "v", "to": target},
        schema=[{"name": "id", "type": "int"}, {"name": "v", "type": source}, SCHEMA[-1]],
        rows=[{"id": i, "v": v, "ts": 1} for i, v in enumerate(values)],
    )
    table = snapshot(scenario)
    assert table.schema.field("v").type == arrow
    if pa.types.is_decimal(arrow):
        converted = [Decimal(v) for v in converted]
    assert column(table, "v") == converted


def test_change_type_then_upsert_takes_the_new_range() -> None:
    table = snapshot(
        spec({"op": "change_type", "column": "qty", "to": "long"}, upsert(row(2, qty=5 * 10**9)))
    )
    assert table.schema.field("qty").type == pa.int64()
    assert column(table, "qty") == [10, 5 * 10**9, 30]


def test_change_type_of_key_column_keeps_keys_matching() -> None:
    table = snapshot(
        spec(
            {"op": "change_type", "column": "id", "to": "string"},
            upsert({"id": "1", "name": "green apple", "qty": 11, "ts": 200}),
        )
    )
    assert column(table, "id") == ["1", "2", "3"]
    assert column(table, "name") == ["green apple", "banana", "cherry"]


@pytest.mark.parametrize(
    ("ts", "name"),
    [(99, "apple"), (100, "new apple"), (101, "new apple")],
    ids=["older-ignored", "same-wins", "newer-wins"],
)
def test_upsert_respects_precombine_order(ts: int, name: str) -> None:
    table = snapshot(spec(upsert(row(1, name="new apple", ts=ts))))
    assert column(table, "name")[0] == name


def test_delete_removes_the_row() -> None:
    table = snapshot(spec({"op": "delete", "keys": [2]}))
    assert column(table, "id") == [1, 3]


def test_delete_then_insert_same_key_again() -> None:
    table = snapshot(
        spec({"op": "delete", "keys": [2]}, {"op": "insert", "rows": [row(2, name="again")]})
    )
    assert table.to_pylist()[1] == row(2, name="again")


def test_schema_on_write_extra_column_joins_at_the_end() -> None:
    declared = [*SCHEMA[:2], {"name": "origin", "type": "string"}, *SCHEMA[2:]]
    table = snapshot(spec(upsert(row(2, qty=21, ts=200, origin="ecuador"), schema=declared)))
    assert fields(table) == [*BASE_TYPES.items(), ("origin", pa.string())]
    assert column(table, "origin") == [None, "ecuador", None]
    assert column(table, "qty") == [10, 21, 30]


def test_schema_on_write_wider_type_widens_old_rows() -> None:
    declared = [*SCHEMA[:2], {"name": "qty", "type": "long"}, SCHEMA[3]]
    table = snapshot(spec(upsert(row(2, qty=5 * 10**9, ts=200), schema=declared)))
    assert fields(table) == [*{**BASE_TYPES, "qty": pa.int64()}.items()]
    assert column(table, "qty") == [10, 5 * 10**9, 30]


MOR_STEPS = (
    upsert(row(1, name="green apple", ts=200), row(4)),
    {"op": "delete", "keys": [2]},
)


def test_mor_read_optimized_sees_base_files_only() -> None:
    table = read_optimized(spec(*MOR_STEPS))
    assert column(table, "id") == [1, 2, 3, 4]  # the delete is in a log file
    assert column(table, "name") == ["apple", "banana", "cherry", "date"]  # so is the update


def test_mor_snapshot_merges_log_files() -> None:
    table = snapshot(spec(*MOR_STEPS), "mor")
    assert column(table, "id") == [1, 3, 4]
    assert column(table, "name") == ["green apple", "cherry", "date"]


def test_mor_compaction_makes_read_optimized_equal_snapshot() -> None:
    scenario = spec(*MOR_STEPS, {"op": "compaction"})
    assert read_optimized(scenario).equals(snapshot(scenario, "mor"))
    assert column(read_optimized(scenario), "id") == [1, 3, 4]


def test_mor_schema_changes_apply_to_base_files_too() -> None:
    scenario = spec(
        {"op": "rename_column", "column": "name", "to": "product"},
        upsert({"id": 1, "product": "green apple", "qty": 11, "ts": 200}),
        add_column("note", "string"),
    )
    table = read_optimized(scenario)
    assert table.column_names == ["id", "product", "qty", "ts", "note"]
    assert column(table, "product") == ["apple", "banana", "cherry"]
    assert column(table, "note") == [None, None, None]


def test_cow_read_optimized_equals_snapshot() -> None:
    scenario = spec(*MOR_STEPS)
    assert read_optimized(scenario, "cow").equals(snapshot(scenario, "cow"))
    assert snapshot(scenario, "cow").equals(snapshot(scenario, "mor"))
