"""Query shapes: what a cell's query selects and filters, and the oracle's answer for it.

A read is a query type (snapshot, ...) and a *shape*. `all` is `SELECT *`. The other shapes are
the queries users run on a changed table, where readers take other paths (column pruning,
Parquet statistics, dictionaries, bloom filters, partition pruning):

- `project`: the record key and the columns the scenario changed, nothing else;
- `filter`: every column, of the rows where a changed column equals a value held by a row
  written *before* the change (the one most rows share), or is NULL where the old rows hold
  nothing in it (an added column), so that a reader must read old files' statistics through
  the column's new name or type; where only a field inside a struct column changed
  (`point.x`), the filter is on that field;
- `range`: the same column between the smallest old value and the largest value;
- `partition`: the rows of one partition (partitioned tables only), through partition pruning;
- `count`: `count(*)` of the rows `filter` selects, which an engine may answer from metadata.

Shapes come from the scenario alone (`shapes_for`), and the oracle evaluates each with the
declared (latest) schema's semantics (`expected_shape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lakecompat.engines.shape import ALL, COUNT_COLUMN, Predicate, Shape, value_at
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, evolve, expected
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.scenario.types import ColumnType

__all__ = [
    "DEFAULT_SHAPES",
    "SHAPES",
    "Change",
    "change_of",
    "changes",
    "expected_shape",
    "shapes_for",
    "written_before",
]

#: Every shape, `all` first (the cells every table gets).
SHAPES = ("all", "project", "filter", "range", "partition", "count")
#: The shapes a run reads unless asked for others (`--shapes`): the cost of `range`,
#: `partition` and `count` on every table is more than the default matrix can carry.
DEFAULT_SHAPES = ("all", "project", "filter")
#: Types a filter may compare: exact values with one literal spelling in every engine (float is
#: left out: its values have no exact decimal literal; nested and binary types have none).
FILTER_TYPES = ("int", "long", "double", "decimal", "string", "date", "timestamp_ntz", "boolean")


@dataclass(frozen=True)
class Change:
    """The latest change of a column the table still has: at which state (the index into
    `oracle.evolve`'s states that first shows it) and what it was, in a user's words."""

    column: str
    state: int
    what: str
    #: False for a column only moved by another column's drop (it took the dropped one's place).
    direct: bool = True


def changes(spec: sc.ScenarioSpec, states: list[TableState] | None = None) -> list[Change]:
    """The latest change of every column the final table has and a step changed (added,
    renamed, retyped, moved, put in the place of a dropped column, or made or unmade a
    partition field), in schema order."""
    states = states or evolve(spec)
    found: dict[str, Change] = {}
    for index, step in enumerate(spec.steps, start=1):
        before, after = states[index - 1].schema, states[index].schema
        for column in after.columns:
            if column.name not in before.names:
                found[column.name] = Change(column.name, index, _new_name(step, column.name))
            elif before.column(column.name).type != column.type:
                old = before.column(column.name).type
                found[column.name] = Change(
                    column.name, index, f"changed from {old} to {column.type}"
                )
        match step:
            case sc.MoveColumn(column=name, after=target, first=first):
                where = "first" if first else f"after {target}" if target else "last"
                found[name] = Change(name, index, f"moved {where}")
            case sc.DropColumn(column=name) if "." not in name:
                _took_place(found, before, after, [name], index)
            case sc.DropColumns(columns=names):
                _took_place(found, before, after, names, index)
            case sc.AddPartitionField(column=name):
                found[name] = Change(name, index, "made a partition field")
            case sc.DropPartitionField(column=name):
                found[name] = Change(name, index, "no longer a partition field")
    final = states[-1].schema.names
    kept = [c for c in found.values() if c.column in final]
    return sorted(kept, key=lambda c: final.index(c.column))


def field_changes(spec: sc.ScenarioSpec, states: list[TableState] | None = None) -> list[Change]:
    """The changes of fields inside struct columns (added, renamed or retyped `point.x`) that
    the latest schema still has, as paths (`point.px` after a rename), latest first."""
    states = states or evolve(spec)
    found: dict[str, Change] = {}
    for index, step in enumerate(spec.steps, start=1):
        match step:
            case sc.RenameColumn(column=path, to=new) if "." in path:
                parent = path.rsplit(".", 1)[0]
                found.pop(path, None)
                found[f"{parent}.{new}"] = Change(f"{parent}.{new}", index, f"renamed from {path}")
            case sc.ChangeType(column=path) if "." in path:
                old = field_type(states[index - 1].schema, path)
                found[path] = Change(path, index, f"changed from {old} to {step.to}")
            case sc.AddColumn(column=column) if "." in column.name:
                found[column.name] = Change(column.name, index, "added")
            case sc.DropColumn(column=path) if "." in path:
                # What stands beside the dropped field is what a reader by position misreads.
                parent = path.rsplit(".", 1)[0]
                for sibling, _ in field_siblings(states[index].schema, parent):
                    name = f"{parent}.{sibling}"
                    found.setdefault(name, Change(name, index, f"beside dropped {path}"))
    final = states[-1].schema
    kept = [c for c in found.values() if field_type(final, c.column) is not None]
    return sorted(kept, key=lambda c: -c.state)


def field_siblings(schema: Schema, parent: str) -> tuple[tuple[str, ColumnType], ...]:
    """The fields of the struct at `parent` (a column or a nested struct), none where there
    is no such struct."""
    kind = field_type(schema, parent)
    return tuple(kind.fields) if kind is not None and kind.name == "struct" else ()


def field_type(schema: Schema, path: str) -> ColumnType | None:
    """The type of a column or of a field inside struct columns (`point.x`); None where the
    schema has no such column or field, or a step of the path is not a struct."""
    name, *fields = path.split(".")
    if name not in schema.names:
        return None
    kind = schema.column(name).type
    for field in fields:
        if kind.name != "struct" or field not in dict(kind.fields):
            return None
        kind = kind.child(field)
    return kind


def _new_name(step: Any, name: str) -> str:
    match step:
        case sc.RenameColumn(column=old):
            return f"renamed from {old}"
        case sc.Upsert():
            return "added by a write (schema on write)"
        case _:
            return "added"


def _took_place(
    found: dict[str, Change], before: Schema, after: Schema, dropped: list[str], index: int
) -> None:
    """Note the column that now stands where the first dropped column stood: a reader that
    matches columns by position reads the dropped column's values for it."""
    position = before.names.index(dropped[0])
    if position < len(after.columns):
        name = after.columns[position].name
        what = f"now in the place of dropped {dropped[0]}"
        found.setdefault(name, Change(name, index, what, direct=False))


def shapes_for(spec: sc.ScenarioSpec) -> list[Shape]:
    """The shapes the scenario's tables are read with: `all`, and where a step changed a
    column, `project`, `filter`, `range` and `count` on it; `partition` where the table is
    partitioned."""
    states = evolve(spec)
    final = states[-1]
    found = changes(spec, states)
    shapes = [ALL]
    if found:
        changed = [c.column for c in found if c.column != spec.key]
        shapes.append(Shape("project", (spec.key, *changed)))
        equal, between = _predicates(spec, final, found)
        if equal is None:  # a struct column changed: filter on the field that did
            equal, between = _predicates(spec, final, field_changes(spec, states))
        if equal is not None:
            shapes.append(Shape("filter", predicate=equal))
        if between is not None:
            shapes.append(Shape("range", predicate=between))
        if equal is not None:
            shapes.append(Shape("count", predicate=equal))
    if final.partition_by:
        partition = _partition_predicate(spec, final)
        if partition is not None:
            shapes.append(Shape("partition", predicate=partition))
    return shapes


def _predicates(
    spec: sc.ScenarioSpec, final: TableState, found: list[Change]
) -> tuple[Predicate | None, Predicate | None]:
    """The equality (or IS NULL) and range predicates on the changed column that suits a
    filter best: of a type with exact literals, not the key where another will do, changed
    by a step of its own rather than moved by a drop, the latest change first."""

    def type_name(change: Change) -> str:
        kind = field_type(final.schema, change.column)
        return kind.name if kind is not None else ""

    candidates = [c for c in found if type_name(c) in FILTER_TYPES]
    candidates.sort(key=lambda c: (c.column == spec.key, not c.direct, -c.state))
    if not candidates:
        return None, None
    change = candidates[0]
    ctype = field_type(final.schema, change.column)
    old = [
        value_at(final.rows[k], change.column)
        for k in sorted(final.rows, key=_order)
        if final.written[k] < change.state
    ]
    values = [v for v in old if v is not None]
    if not values:
        # Only NULLs before the change (an added column): the old files must read as NULL.
        return Predicate(change.column, str(ctype), "is null"), None
    every = [
        value for row in final.rows.values() if (value := value_at(row, change.column)) is not None
    ]
    # The old value most rows share (rows in old and new files, where a value is in both).
    chosen = max(values, key=lambda v: (every.count(v), -values.index(v)))
    equal = Predicate(change.column, str(ctype), "=", (chosen,))
    if ctype.name == "boolean":
        return equal, None
    between = Predicate(change.column, str(ctype), "between", (min(values), max(every)))
    return equal, between


def _partition_predicate(spec: sc.ScenarioSpec, final: TableState) -> Predicate | None:
    """`partition column = value` of the first row (by key) that has one; the column is the
    partition field added last (partition evolution), else the first of `partition_by`."""
    added = [s.column for s in spec.steps if isinstance(s, sc.AddPartitionField)]
    name = next((c for c in reversed(added) if c in final.partition_by), final.partition_by[0])
    if name not in final.schema.names:
        return None
    for key in sorted(final.rows, key=_order):
        value = final.rows[key][name]
        if value is not None:
            return Predicate(name, str(final.schema.column(name).type), "=", (value,))
    return None


def _order(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def expected_shape(
    spec: sc.ScenarioSpec,
    table_type: str,
    query_type: str,
    shape: Shape,
    appended: Sequence[int] | None = None,
    committed: Sequence[int] | None = None,
) -> pa.Table:
    """The table a correct engine returns for this query type and shape (`appended` and
    `committed`: as `oracle.expected` takes them)."""
    table = expected(spec, table_type, query_type, appended, committed)
    if shape.predicate is not None:
        keep = [shape.predicate.holds(row) for row in table.to_pylist()]
        table = table.filter(pa.array(keep, pa.bool_()))
    if shape.counts:
        return pa.table({COUNT_COLUMN: pa.array([table.num_rows], pa.int64())})
    if shape.columns:
        table = table.select(list(shape.columns))
    return table


def change_of(spec: sc.ScenarioSpec, shape: Shape) -> Change | None:
    """The change a shape's predicate is about (None: no predicate, or a partition column the
    scenario did not change)."""
    if shape.predicate is None:
        return None
    states = evolve(spec)
    found = {c.column: c for c in [*changes(spec, states), *field_changes(spec, states)]}
    return found.get(shape.predicate.column)


def written_before(spec: sc.ScenarioSpec, change: Change) -> set[Any]:
    """Keys of the rows whose current version was written before `change` (they sit in files
    that hold the column's old name, type or position)."""
    final = evolve(spec)[-1]
    return {k for k, state in final.written.items() if state < change.state}
