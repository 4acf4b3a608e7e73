"""The oracle: the table every kind of step must leave behind, for snapshot and read-optimized."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from lakecompat.harness.scenario.model import ScenarioSpec
from lakecompat.harness.scenario.oracle import StepError, evolve, expected

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
    data = {
        "title": "t",
        "key": "id",
        "formats": {"hudi": {"ordering": "ts"}},
        "schema": SCHEMA,
        "rows": ROWS,
    }
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


def test_reference_is_the_state_before_the_first_schema_change() -> None:
    from lakecompat.harness.scenario.oracle import reference_index

    rename = {"op": "rename_column", "column": "name", "to": "product"}
    assert reference_index(spec(upsert(row(1, ts=150)), rename, upsert(row(2, ts=300)))) == 1
    assert reference_index(spec(rename)) == 0
    assert reference_index(spec(upsert(row(1, ts=150)))) == 0  # no change: the seed rows
    on_write = upsert(row(4, color="red"), schema=[*SCHEMA, {"name": "color", "type": "string"}])
    assert reference_index(spec(upsert(row(1, ts=150)), on_write)) == 1


def test_time_travel_returns_the_old_schema_and_rows() -> None:
    rename = {"op": "rename_column", "column": "name", "to": "product"}
    later = {"id": 2, "product": "b", "qty": 2, "ts": 300}
    scenario = spec(upsert(row(1, qty=11, ts=150)), rename, upsert(later))
    for table_type in ("cow", "mor"):
        past = expected(scenario, table_type, "time_travel")
        assert past.column_names == ["id", "name", "qty", "ts"]
        assert column(past, "qty") == [11, 20, 30]
        assert column(past, "name") == ["apple", "banana", "cherry"]


def test_incremental_returns_rows_written_after_the_reference_in_the_new_schema() -> None:
    rename = {"op": "rename_column", "column": "name", "to": "product"}
    scenario = spec(
        upsert(row(1, ts=150)),
        rename,
        upsert({"id": 2, "product": "banana", "qty": 21, "ts": 300}),
        {"op": "insert", "rows": [{"id": 4, "product": "date", "qty": 40, "ts": 300}]},
        upsert({"id": 3, "product": "old", "qty": 1, "ts": 50}),  # older: loses, not written
    )
    changed = expected(scenario, "mor", "incremental")
    assert changed.column_names == ["id", "product", "qty", "ts"]
    assert column(changed, "id") == [2, 4]
    assert column(changed, "qty") == [21, 40]


def test_incremental_leaves_out_deleted_rows_and_follows_a_retyped_key() -> None:
    scenario = spec(
        {"op": "change_type", "column": "id", "to": "long"},
        upsert(row(1, ts=300), row(2, ts=300)),
        {"op": "delete", "keys": [2]},
    )
    changed = expected(scenario, "cow", "incremental")
    assert column(changed, "id") == [1]
    assert changed.schema.field("id").type == pa.int64()


def test_an_append_scan_returns_the_appended_rows_as_written_in_the_latest_schema() -> None:
    # Iceberg's incremental read: only the commits that appended (state 2, the insert, and
    # state 4, an upsert of a new key) count; the rows come as they were written, so a later
    # update (state 5 changes row 4) is not in them, and a later rename applies.
    scenario = spec(
        add_column("color", "string"),
        {"op": "insert", "rows": [row(4, color="brown", ts=200)]},
        {"op": "rename_column", "column": "color", "to": "colour"},
        upsert({"id": 5, "name": "elder", "qty": 50, "ts": 300, "colour": "purple"}),
        upsert({"id": 4, "name": "date", "qty": 41, "ts": 400, "colour": "red"}),
    )
    appended = expected(scenario, "cow", "incremental", appended=(2, 4))
    assert appended.column_names == ["id", "name", "qty", "ts", "colour"]
    assert column(appended, "id") == [4, 5]
    assert column(appended, "colour") == ["brown", "purple"]
    assert column(appended, "qty") == [40, 50]
    # Hudi's incremental query: every row written after the reference, its latest version.
    changed = expected(scenario, "cow", "incremental")
    assert column(changed, "qty") == [41, 50]
    # No append after the reference: no rows, in the latest schema.
    nothing = expected(scenario, "mor", "incremental", appended=())
    assert nothing.num_rows == 0 and nothing.column_names == appended.column_names


def test_time_travel_by_timestamp_returns_the_reference_state() -> None:
    rename = {"op": "rename_column", "column": "name", "to": "product"}
    scenario = spec(upsert(row(1, qty=11, ts=150)), rename)
    by_time = expected(scenario, "mor", "time_travel_timestamp")
    assert by_time.equals(expected(scenario, "mor", "time_travel"))
    assert by_time.column_names == ["id", "name", "qty", "ts"]


def test_move_column_changes_only_the_order() -> None:
    after = snapshot(spec({"op": "move_column", "column": "qty", "after": "id"}))
    assert after.column_names == ["id", "qty", "name", "ts"]
    assert column(after, "qty") == [10, 20, 30]
    first = snapshot(spec({"op": "move_column", "column": "ts", "first": True}))
    assert first.column_names == ["ts", "id", "name", "qty"]


def test_move_column_needs_a_position_and_an_existing_anchor() -> None:
    with pytest.raises(Exception, match="first: true"):
        evolve(spec({"op": "move_column", "column": "qty"}))
    with pytest.raises(Exception, match="no column 'nope'"):
        evolve(spec({"op": "move_column", "column": "qty", "after": "nope"}))


def test_drop_columns_removes_each_column() -> None:
    table = snapshot(spec({"op": "drop_columns", "columns": ["name", "qty"]}))
    assert table.column_names == ["id", "ts"]


def test_drop_then_readd_reads_null_in_old_rows() -> None:
    table = snapshot(
        spec(
            {"op": "drop_column", "column": "qty"},
            {"op": "add_column", "column": {"name": "qty", "type": "int"}},
        )
    )
    assert table.column_names == ["id", "name", "ts", "qty"]
    assert column(table, "qty") == [None, None, None]


def test_drop_then_rename_into_the_dropped_name_keeps_the_renamed_values() -> None:
    table = snapshot(
        spec(
            {"op": "drop_column", "column": "qty"},
            {"op": "rename_column", "column": "ts", "to": "qty"},
        )
    )
    assert table.column_names == ["id", "name", "qty"]
    assert column(table, "qty") == [100, 100, 100]


def test_clustering_moves_log_updates_into_base_files() -> None:
    scenario = spec(upsert(row(1, qty=11, ts=200)), {"op": "clustering"})
    assert column(read_optimized(scenario), "qty") == [11, 20, 30]


def test_upsert_missing_a_column_keeps_it_and_writes_null() -> None:
    narrow = [c for c in SCHEMA if c["name"] != "qty"]
    missing = {"id": 2, "name": "banana", "ts": 200}
    setting = {"hoodie.write.set.null.for.missing.columns": "true"}
    table = snapshot(spec(upsert(missing, schema=narrow, settings=setting)))
    assert table.column_names == ["id", "name", "qty", "ts"]
    assert column(table, "qty") == [10, None, 30]


def test_writer_settings_must_be_hudi_options() -> None:
    with pytest.raises(Exception, match="settings"):
        spec(upsert(row(2, ts=200), settings={"spark.sql.shuffle.partitions": "1"}))


def test_partition_columns_must_exist() -> None:
    with pytest.raises(Exception, match="'region' is not a column"):
        evolve(spec(partition_by=["region"]))


POINT = [
    {"name": "id", "type": "int"},
    {"name": "point", "type": "struct<x:int,y:int>"},
    {"name": "ts", "type": "long"},
]
POINTS = [{"id": 1, "point": {"x": 1, "y": 2}, "ts": 100}, {"id": 2, "point": None, "ts": 100}]


def test_nested_field_added_reads_null_in_old_structs() -> None:
    add = {"op": "add_column", "column": {"name": "point.z", "type": "int"}}
    table = snapshot(spec(add, schema=POINT, rows=POINTS))
    assert table.schema.field("point").type == pa.struct(
        [("x", pa.int32()), ("y", pa.int32()), ("z", pa.int32())]
    )
    assert column(table, "point") == [{"x": 1, "y": 2, "z": None}, None]


def test_nested_field_renamed_keeps_its_values() -> None:
    rename = {"op": "rename_column", "column": "point.x", "to": "px"}
    table = snapshot(spec(rename, schema=POINT, rows=POINTS))
    assert column(table, "point") == [{"px": 1, "y": 2}, None]


def test_nested_field_retyped_converts_inside_the_struct() -> None:
    retype = {"op": "change_type", "column": "point.x", "to": "long"}
    table = snapshot(spec(retype, schema=POINT, rows=POINTS))
    assert table.schema.field("point").type.field("x").type == pa.int64()
    assert column(table, "point") == [{"x": 1, "y": 2}, None]


def test_array_element_and_map_value_fields() -> None:
    schema = [
        {"name": "id", "type": "int"},
        {"name": "items", "type": "array<struct<sku:string>>"},
        {"name": "counts", "type": "map<string,int>"},
        {"name": "ts", "type": "long"},
    ]
    rows = [{"id": 1, "items": [{"sku": "a"}], "counts": {"k": 1}, "ts": 100}]
    table = snapshot(
        spec(
            {"op": "add_column", "column": {"name": "items.element.note", "type": "string"}},
            {"op": "change_type", "column": "counts.value", "to": "long"},
            schema=schema,
            rows=rows,
        )
    )
    assert column(table, "items") == [[{"sku": "a", "note": None}]]
    assert table.schema.field("counts").type == pa.map_(pa.string(), pa.int64())
    assert column(table, "counts") == [[("k", 1)]]


def test_nested_paths_that_do_not_exist_name_the_field() -> None:
    with pytest.raises(Exception, match=r"no field 'point\.q'"):
        evolve(
            spec({"op": "rename_column", "column": "point.q", "to": "r"}, schema=POINT, rows=POINTS)
        )
    with pytest.raises(Exception, match="only be added to structs"):
        evolve(
            spec(
                {"op": "add_column", "column": {"name": "point.x.deep", "type": "int"}},
                schema=POINT,
                rows=POINTS,
            )
        )


def test_a_narrower_batch_type_keeps_the_wider_column() -> None:
    wide = [{**c, "type": "long"} if c["name"] == "qty" else c for c in SCHEMA]
    scenario = spec(upsert(row(2, qty=21, ts=200), schema=SCHEMA), schema=wide)
    table = snapshot(scenario)
    assert table.schema.field("qty").type == pa.int64()
    assert column(table, "qty") == [10, 21, 30]


def test_a_changelog_lists_each_snapshots_deletes_and_inserts_in_the_latest_schema() -> None:
    # States 2, 3 and 5 committed snapshots (the ordinals 0, 1, 2); the rename commits none.
    # An update is a DELETE of the old row and an INSERT of the new one; a write that leaves a
    # row as it was (state 5 writes row 5 again unchanged) changes nothing.
    scenario = spec(
        add_column("color", "string"),
        upsert(row(1, qty=11, ts=200, color="red"), row(4, color="brown", ts=200)),
        {"op": "delete", "keys": [2]},
        {"op": "rename_column", "column": "color", "to": "colour"},
        upsert({"id": 4, "name": "date", "qty": 40, "ts": 200, "colour": "brown"}),
    )
    changes = expected(scenario, "cow", "changelog", committed=(2, 3, 5))
    assert changes.column_names == [
        "id",
        "name",
        "qty",
        "ts",
        "colour",
        "_change_type",
        "_change_ordinal",
    ]
    assert changes.schema.field("_change_ordinal").type == pa.int32()
    listed = [
        (r["_change_ordinal"], r["_change_type"], r["id"], r["qty"], r["colour"])
        for r in changes.to_pylist()
    ]
    assert listed == [
        (0, "DELETE", 1, 10, None),
        (0, "INSERT", 1, 11, "red"),
        (0, "INSERT", 4, 40, "brown"),
        (1, "DELETE", 2, 20, None),
    ]


def test_a_changelog_needs_the_snapshots_the_table_committed() -> None:
    with pytest.raises(ValueError, match="committed a snapshot"):
        expected(spec(upsert(row(1, ts=150))), "cow", "changelog")


def test_dropping_a_struct_s_field_removes_it_from_every_row_and_time_travel_keeps_it() -> None:
    schema = [*SCHEMA, {"name": "point", "type": "struct<x:int,y:int>"}]
    rows = [{**r, "point": {"x": r["id"], "y": 10 * r["id"]}} for r in ROWS]
    scenario = spec(
        {"op": "drop_column", "column": "point.y"},
        upsert({"id": 4, "name": "date", "qty": 40, "ts": 200, "point": {"x": 4}}),
        schema=schema,
        rows=rows,
    )
    now = snapshot(scenario)
    assert str(now.schema.field("point").type) == "struct<x: int32>"
    assert column(now, "point") == [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}]
    past = expected(scenario, "cow", "time_travel")
    assert column(past, "point")[0] == {"x": 1, "y": 10}
    lone = [SCHEMA[0], SCHEMA[3], {"name": "point", "type": "struct<x:int>"}]
    only = spec(
        {"op": "drop_column", "column": "point.x"},
        schema=lone,
        rows=[{"id": 1, "ts": 1, "point": {"x": 1}}],
    )
    with pytest.raises(StepError, match="the only field"):
        evolve(only)
