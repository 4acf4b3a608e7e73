"""The baseline scenarios carry the column shapes the catalog uses, without any schema change.

A cell fails "without any schema change" only where a baseline table holds what the cell's
table holds: a column of the same type, with the same NULL, empty and nested values. These
tests derive what the catalog uses from scenarios/ itself, so a scenario with a new type or a
new shape of value fails them until a baseline carries it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support import SCENARIOS

from lakecompat.harness.run.plan import needed_baselines
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.oracle import TableState, evolve
from lakecompat.harness.scenario.type_shapes import spelled, spelled_types, type_shapes
from lakecompat.harness.scenario.types import ColumnType, parse_type

#: What the baselines hold whether the catalog's rows do or not (issue 69): NULL arrays and
#: maps, empty ones, NULL structs and NULL struct fields, also inside arrays and maps (a NULL
#: list of structs reads as an empty list in PyIceberg, apache/iceberg-python#3833). Not a
#: NULL element of an array: Hudi's writer refuses it (Parquet's two-level Avro lists,
#: apache/hudi#2265), so a scenario cannot hold one in both formats.
NESTED_NULLS = {
    ("array", "NULL"),
    ("array", "empty"),
    ("map", "NULL"),
    ("map", "empty"),
    ("struct", "NULL"),
    ("struct<scalar>", "NULL"),
    ("array<struct<scalar>>", "NULL"),
    ("map<string,scalar>", "NULL"),
    ("map<string,struct>", "NULL"),
    ("map<string,struct<scalar>>", "NULL"),
}


def value_shapes(
    value: Any, ctype: ColumnType, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    """(position, kind) of a value and of every value nested in it. The position is the path
    of nested types down to it, a simple type as `scalar` (`array<struct<scalar>>`: a field of
    an array's struct elements; which types there are is `type_shapes`' concern), the kind
    `NULL`, `empty` (an array or a map without entries) or `value`."""
    here = (*path, ctype.name if ctype.is_nested else "scalar")
    if value is None:
        yield spelled(here), "NULL"
        return
    if ctype.name == "struct":
        yield spelled(here), "value"
        for name, child in ctype.fields:
            yield from value_shapes(value.get(name), child, here)
        return
    if not ctype.is_nested:
        yield spelled(here), "value"
        return
    entries = value if ctype.name == "array" else list(value.values())
    yield spelled(here), "value" if entries else "empty"
    for entry in entries:
        yield from value_shapes(entry, ctype.fields[0][1], here)


def rows_shapes(state: TableState, rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """The (position, kind) of every value of `rows`, in `state`'s schema."""
    types = {c.name: c.type for c in state.schema.columns}
    return {
        shape
        for row in rows
        for name, value in row.items()
        for shape in value_shapes(value, types[name])
    }


def catalog() -> list[sc.Scenario]:
    return [s for s in load_scenarios(SCENARIOS) if not s.spec.baseline]


def baselines() -> list[sc.Scenario]:
    return [s for s in load_scenarios(SCENARIOS) if s.spec.baseline]


def used_types(scenarios: list[sc.Scenario]) -> dict[str, str]:
    """Every type shape `scenarios` spell, with a scenario spelling it."""
    found: dict[str, str] = {}
    for scenario in scenarios:
        for ctype in spelled_types(scenario.spec):
            for shape in type_shapes(ctype):
                found.setdefault(shape, scenario.id)
    return found


def written(scenario: sc.Scenario) -> Iterator[tuple[int, set[tuple[str, str]]]]:
    """Per write (0: the seed rows, i: steps[i-1]), the (position, kind) of every value it
    wrote, in the table's schema at that write (a column the write leaves out is NULL)."""
    for index, state in enumerate(evolve(scenario.spec)):
        rows = [row for key, row in state.rows.items() if state.written[key] == index]
        if rows:
            yield index, rows_shapes(state, rows)


def written_shapes(scenarios: list[sc.Scenario]) -> dict[tuple[str, str], str]:
    """Every (position, kind) of a value `scenarios` write, with a scenario writing it."""
    found: dict[tuple[str, str], str] = {}
    for scenario in scenarios:
        for _, shapes in written(scenario):
            for shape in shapes:
                found.setdefault(shape, scenario.id)
    return found


def test_the_baselines_carry_every_column_type_of_the_catalog() -> None:
    carried = used_types(baselines())
    missing = {shape: by for shape, by in used_types(catalog()).items() if shape not in carried}
    assert not missing, (
        "no baseline scenario (scenarios/baseline/) has a column of these types, which the "
        f"catalog uses (type: a scenario using it): {missing}"
    )


def test_the_baselines_hold_every_kind_of_value_the_catalog_writes() -> None:
    held = written_shapes(baselines())
    missing = {shape: by for shape, by in written_shapes(catalog()).items() if shape not in held}
    assert not missing, f"no baseline scenario holds these values: {missing}"


def test_the_baselines_hold_null_and_empty_nested_values() -> None:
    held = written_shapes(baselines())
    assert NESTED_NULLS - set(held) == set()


def test_null_and_empty_values_are_in_the_seed_files_and_in_the_upserted_ones() -> None:
    """Parquet base files and a merge-on-read table's (Avro) log files store NULL and empty
    values differently: each baseline writes them with its seed rows and with its upsert
    (`baseline/no_change` stays as it was: its cells are named in many places)."""
    for scenario in baselines():
        if scenario.id == "baseline/no_change":
            continue
        writes = dict(written(scenario))
        seed, later = writes.pop(0), set().union(*writes.values())
        nulls = {shape for shape in seed | later if shape[1] != "value"}
        assert nulls <= seed, (scenario.id, nulls - seed)
        assert nulls <= later, (scenario.id, nulls - later)


def test_the_baselines_change_no_schema_and_update_and_delete_like_no_change() -> None:
    found = baselines()
    assert {s.id for s in found} >= {"baseline/no_change", "baseline/arrays", "baseline/maps"}
    for scenario in found:
        assert scenario.category == "baseline", scenario.id
        assert sc.changes(scenario.spec) == [], scenario.id
        ops = [step.op for step in scenario.spec.steps]
        assert ops == ["upsert", "delete"], (scenario.id, ops)
        assert not any(step.op == "upsert" and step.settings for step in scenario.spec.steps)


@pytest.mark.parametrize(
    ("ctype", "shapes"),
    [
        ("int", {"int"}),
        ("decimal(12,4)", {"decimal(12,4)"}),
        ("struct<x:int,y:int>", {"struct<int>"}),
        ("array<struct<sku:string,qty:int>>", {"array<struct<string>>", "array<struct<int>>"}),
        ("map<string,struct<v:int>>", {"map<string,struct<int>>"}),
        ("map<string,array<date>>", {"map<string,array<date>>"}),
    ],
)
def test_a_type_is_the_paths_down_to_its_simple_types(ctype: str, shapes: set[str]) -> None:
    assert type_shapes(parse_type(ctype)) == shapes


def test_a_value_is_the_kind_of_it_and_of_every_value_in_it() -> None:
    ctype = parse_type("array<struct<sku:string,qty:int>>")
    value = [{"sku": "a", "qty": None}, None]
    assert set(value_shapes(value, ctype)) == {
        ("array", "value"),
        ("array<struct>", "value"),
        ("array<struct>", "NULL"),
        ("array<struct<scalar>>", "value"),
        ("array<struct<scalar>>", "NULL"),
    }
    assert set(value_shapes([], ctype)) == {("array", "empty")}
    assert set(value_shapes({}, parse_type("map<string,int>"))) == {("map", "empty")}
    assert set(value_shapes(None, parse_type("struct<x:int>"))) == {("struct", "NULL")}


@pytest.mark.parametrize(
    ("pattern", "read"),
    [
        ("rename_column/rename", {"baseline/no_change"}),
        ("add_column/nested_array_element_field", {"baseline/no_change", "baseline/arrays"}),
        ("type_change/int_to_decimal", {"baseline/no_change", "baseline/decimals"}),
        ("baseline/maps", {"baseline/no_change", "baseline/maps"}),
    ],
)
def test_a_run_reads_the_baselines_that_carry_its_column_types(
    pattern: str, read: set[str]
) -> None:
    """Every baseline would slow every small run: a run reads `baseline/no_change`, and each
    other baseline only where a chosen scenario has a column type it carries."""
    chosen = load_scenarios(SCENARIOS, pattern)
    assert {s.id for s in needed_baselines(load_scenarios(SCENARIOS), chosen)} | {
        s.id for s in chosen if s.spec.baseline
    } == read


def test_a_run_of_the_whole_catalog_reads_every_baseline() -> None:
    everything = load_scenarios(SCENARIOS)
    assert needed_baselines(everything, everything) == baselines()
