"""The oracle: what a table must contain after a scenario's steps, from the scenario alone.

It models what each change means logically, never what an engine happens to return:
added columns read NULL in existing rows, dropped columns are gone (a re-added name starts
NULL), renamed columns keep their values, retyped columns hold the old values converted.

For merge-on-read it also tracks what the base (Parquet) files hold, which is what a
read-optimized query shows: the writer disables small-file packing, so rows with new keys land
in new base files, updates and deletes of existing keys land in log files until a compaction.

Incremental and time-travel queries start from the *reference* state: the table just before
the first schema change (the seed rows when a scenario changes no schema). Time travel as of
that instant (by its id, or by a time after it) must return that state's schema and rows; an
incremental query from it must return the rows written after it, in the latest schema. A
format whose incremental read is an append scan (Iceberg) returns the rows its append commits
after the reference added, as they were written (later updates and deletes are other commits),
in the latest schema; which commits were appends is the one fact taken from the written table
(`TableRef.appended`), as the reference commit itself is. A changelog read from the reference
returns, per snapshot after it (`TableRef.committed`), the rows its step deleted and inserted
(an update as both), in the latest schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lakecompat.engines.formats import FORMATS, ORIGINAL
from lakecompat.engines.table import CHANGE_ORDINAL, CHANGE_TYPE
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.schema import Column, Schema, SchemaChangeError
from lakecompat.harness.scenario.types import (
    PROMOTIONS,
    coerce,
    convert,
    map_at,
    split_path,
    to_arrow_value,
)

Row = dict[str, Any]


class StepError(ValueError):
    """A step that cannot apply to the table as the scenario left it; `field` says where."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass
class TableState:
    """The logical table after a step: its schema, its rows by key and its base-file rows."""

    schema: Schema
    rows: dict[Any, Row] = field(default_factory=dict)
    base: dict[Any, Row] = field(default_factory=dict)
    #: The state index (0 = seed rows, i = after steps[i-1]) that wrote each row's version.
    written: dict[Any, int] = field(default_factory=dict)
    #: The state index being built.
    index: int = 0
    #: The columns later writes are partitioned by (`partition_by`, as partition evolution
    #: leaves it).
    partition_by: list[str] = field(default_factory=list)

    def table(self, rows: dict[Any, Row]) -> pa.Table:
        ordered = [rows[k] for k in sorted(rows, key=_sort_key)]
        types = {c.name: c.type for c in self.schema.columns}
        shaped = [{n: to_arrow_value(v, types[n]) for n, v in row.items()} for row in ordered]
        return pa.Table.from_pylist(shaped, schema=self.schema.arrow())


def schema_of(columns: list[sc.ColumnSpec]) -> Schema:
    """A Schema from column declarations."""
    return Schema(tuple(Column(c.name, c.type, c.comment) for c in columns))


def evolve(spec: sc.ScenarioSpec) -> list[TableState]:
    """The state after the seed rows, then after each step (len(steps) + 1 states)."""
    schema = schema_of(spec.schema_)
    _require_columns(schema, spec, "schema")
    state = TableState(schema, partition_by=list(spec.partition_by))
    _write(state, spec, spec.rows, "rows", new_keys_only=True)
    states = [copy.deepcopy(state)]
    for index, step in enumerate(spec.steps):
        where = f"steps[{index}]"
        state.index = index + 1
        names = state.schema.names
        try:
            _apply(state, spec, step, where)
        except SchemaChangeError as exc:
            raise StepError(f"{where}.{_step_field(step, names)}", str(exc)) from None
        states.append(copy.deepcopy(state))
    return states


def reference_index(spec: sc.ScenarioSpec) -> int:
    """The state incremental and time-travel queries start from: before the first change."""
    for index, step in enumerate(spec.steps):
        if step.op in sc.SCHEMA_OPS or (isinstance(step, sc.Upsert) and step.is_change):
            return index
    return 0


def expected(
    spec: sc.ScenarioSpec,
    table_type: str,
    query_type: str,
    appended: Sequence[int] | None = None,
    committed: Sequence[int] | None = None,
) -> pa.Table:
    """The table a correct engine returns for this query type after all steps; `appended`:
    the states whose commits were appends, for a format whose incremental read returns those
    (None: every row written after the reference); `committed`: the states whose step
    committed a snapshot, which a changelog read returns the changes of."""
    states = evolve(spec)
    state = states[-1]
    if query_type == "changelog":
        if committed is None:
            raise ValueError("a changelog read needs the states that committed a snapshot")
        return _changes(spec, states, committed)
    if query_type in ("time_travel", "time_travel_timestamp"):
        past = states[reference_index(spec)]
        return past.table(past.rows)
    if query_type == "incremental" and appended is not None:
        return _appended_rows(spec, states, appended)
    if query_type == "incremental":
        since = reference_index(spec)
        changed = {k: row for k, row in state.rows.items() if state.written[k] > since}
        return state.table(changed)
    if table_type == "mor" and query_type == "read_optimized":
        return state.table(state.base)
    return state.table(state.rows)


def _appended_rows(
    spec: sc.ScenarioSpec, states: list[TableState], appended: Sequence[int]
) -> pa.Table:
    """The rows each state of `appended` wrote, as written, carried through the later schema
    changes into the latest schema."""
    tables = [states[-1].table({})]
    for index in appended:
        written = {k for k, at in states[index].written.items() if at == index}
        state = _carried(spec, states, index, written.__contains__)
        tables.append(state.table(state.rows))
    return pa.concat_tables(tables)


def _changes(spec: sc.ScenarioSpec, states: list[TableState], committed: Sequence[int]) -> pa.Table:
    """What a changelog read returns: for each state of `committed` (ordinal 0, 1, ... in that
    order), the rows its step deleted and inserted, an updated row as both, compared whole in
    the latest schema (a write that leaves a row as it was changes nothing)."""
    final = states[-1]
    types = {c.name: c.type for c in final.schema.columns}
    rows: list[Row] = []
    kinds: list[str] = []
    ordinals: list[int] = []
    for ordinal, index in enumerate(committed):
        before = _carried(spec, states, index - 1).rows
        after = _carried(spec, states, index).rows
        for key in sorted(before.keys() | after.keys(), key=_sort_key):
            old, new = before.get(key), after.get(key)
            if old is not None and new is not None and _canonical(old) == _canonical(new):
                continue
            for row, kind in ((old, "DELETE"), (new, "INSERT")):
                if row is not None:
                    rows.append(row)
                    kinds.append(kind)
                    ordinals.append(ordinal)
    shaped = [{n: to_arrow_value(row.get(n), types[n]) for n in types} for row in rows]
    table = pa.Table.from_pylist(shaped, schema=final.schema.arrow())
    table = table.append_column(CHANGE_TYPE, pa.array(kinds, pa.string()))
    return table.append_column(CHANGE_ORDINAL, pa.array(ordinals, pa.int32()))


def _canonical(row: Row) -> str:
    """A row's values as text that equal rows share (NaN included)."""
    return json.dumps(row, sort_keys=True, default=repr)


def _carried(
    spec: sc.ScenarioSpec,
    states: list[TableState],
    index: int,
    keep: Callable[[Any], bool] = lambda key: True,
) -> TableState:
    """The rows of state `index` whose key `keep` accepts, carried through the schema changes
    of the later steps into the latest schema (their data changes are not applied)."""
    state = copy.deepcopy(states[index])
    state.rows = {k: row for k, row in state.rows.items() if keep(k)}
    state.base, state.written = {}, {k: index for k in state.rows}
    for later, step in enumerate(spec.steps[index:], start=index):
        if step.op in sc.SCHEMA_OPS:
            _apply(state, spec, step, f"steps[{later}]")
        elif isinstance(step, sc.Upsert) and step.schema_ is not None:
            _evolve_on_write(state, schema_of(step.schema_), spec.key)
    return state


def _apply(state: TableState, spec: sc.ScenarioSpec, step: Any, where: str) -> None:
    match step:
        case sc.Insert(rows=rows):
            _write(state, spec, rows, f"{where}.rows", new_keys_only=True)
        case sc.Upsert(rows=rows, schema_=declared):
            if declared is not None:
                if len({c.name for c in declared}) != len(declared):
                    raise StepError(f"{where}.schema", "column names must be unique")
                _evolve_on_write(state, schema_of(declared), spec.key)
            _write(state, spec, rows, f"{where}.rows", new_keys_only=False)
        case sc.Delete(keys=keys):
            _delete(state, spec, keys, f"{where}.keys")
        case sc.AddColumn(column=col, after=after, first=first) if "." in col.name:
            parent, leaf = col.name.rsplit(".", 1)
            old = state.schema
            state.schema = state.schema.add(Column(col.name, col.type, col.comment), after, first)
            _for_nested(state, old, parent, lambda struct: {**struct, leaf: None})
        case sc.AddColumn(column=col, after=after, first=first):
            state.schema = state.schema.add(Column(col.name, col.type, col.comment), after, first)
            _for_all_rows(state, lambda row: row.setdefault(col.name, None))
        case sc.RenameColumn(column=name, to=new_name) if "." in name:
            parent, leaf = name.rsplit(".", 1)
            old = state.schema
            state.schema = state.schema.rename(name, new_name)
            _for_nested(
                state,
                old,
                parent,
                lambda struct: {(new_name if k == leaf else k): v for k, v in struct.items()},
            )
        case sc.DropColumn(column=name) if "." in name:
            parent, leaf = name.rsplit(".", 1)
            old = state.schema
            state.schema = state.schema.drop(name)
            _for_nested(
                state, old, parent, lambda struct: {k: v for k, v in struct.items() if k != leaf}
            )
        case sc.DropColumn(column=name):
            state.schema = state.schema.drop(name)
            _for_all_rows(state, lambda row: row.pop(name, None))
        case sc.DropColumns(columns=names):
            for name in names:
                state.schema = state.schema.drop(name)
                _for_all_rows(state, lambda row, name=name: row.pop(name, None))
        case sc.MoveColumn(column=name, after=after, first=first):
            state.schema = state.schema.move(name, after, first)
        case sc.RenameColumn(column=name, to=new_name):
            state.schema = state.schema.rename(name, new_name)
            _for_all_rows(state, lambda row: row.__setitem__(new_name, row.pop(name)))
            # A partition field follows its column (Iceberg's fields name the column's id).
            state.partition_by = [new_name if c == name else c for c in state.partition_by]
        case sc.ChangeType(column=name, to=target):
            _retype(state, name, target, spec.key)
        case sc.AddPartitionField(column=name):
            if name not in state.schema.names:
                raise StepError(f"{where}.column", f"{name!r} is not a column of the table")
            if name in state.partition_by:
                raise StepError(f"{where}.column", f"the table is already partitioned by {name!r}")
            state.partition_by.append(name)  # the rows stay as they are
        case sc.DropPartitionField(column=name):
            if name not in state.partition_by:
                partitioned = ", ".join(state.partition_by) or "nothing"
                raise StepError(
                    f"{where}.column", f"the table is not partitioned by {name!r} ({partitioned})"
                )
            state.partition_by.remove(name)
        case sc.UpgradeWriter():
            pass  # the data stays as it is; only the release that writes next changes
        case sc.Compaction() | sc.Clustering():
            # Both rewrite every file group's latest rows into new base files.
            state.base = copy.deepcopy(state.rows)


def _step_field(step: Any, names: list[str]) -> str:
    """The field of a schema step naming a column the table lacks or already has."""
    match step:
        case sc.AddColumn(column=col):
            return "column.name" if col.name in names or "." in col.name else "after"
        case sc.RenameColumn(column=name):
            return "to" if name in names else "column"
        case sc.MoveColumn(column=name, after=after):
            return "after" if name in names and after is not None else "column"
        case sc.DropColumns(columns=columns):
            missing = [i for i, c in enumerate(columns) if c not in names]
            return f"columns[{missing[0]}]" if missing else "columns"
        case _:
            return "column"


def _evolve_on_write(state: TableState, declared: Schema, key: str) -> None:
    """Schema on write: new columns join at the end, wider types replace the old ones.

    A narrower incoming type (an int written into a long column) leaves the column as it is:
    the values are promoted, the table does not lose range. Missing columns stay (NULL).
    """
    for col in declared.columns:
        if col.name not in state.schema.names:
            state.schema = state.schema.add(col)
            _for_all_rows(state, lambda row, name=col.name: row.setdefault(name, None))
            continue
        current = state.schema.column(col.name).type
        if current != col.type and (col.type.name, current.name) not in PROMOTIONS:
            _retype(state, col.name, col.type, key)


def _for_nested(state: TableState, old: Schema, path: str, change: Any) -> None:
    """Apply `change` to every value found at `path` (a nested field or struct) in all rows."""
    top, *rest = split_path(path)
    top_type = old.column(top).type
    _for_all_rows(state, lambda row: row.__setitem__(top, map_at(row[top], top_type, rest, change)))


def _retype(state: TableState, name: str, target: Any, key: str) -> None:
    if "." in name:
        source = state.schema.type_of(name)
        old = state.schema
        state.schema = state.schema.retype(name, target)
        _for_nested(state, old, name, lambda value: convert(value, source, target))
        return
    source = state.schema.column(name).type
    state.schema = state.schema.retype(name, target)
    _for_all_rows(state, lambda row: row.__setitem__(name, convert(row[name], source, target)))
    if name == key:  # the rows are found by their key value, which changed with the type
        state.written = {state.rows[k][key]: i for k, i in state.written.items()}
        state.rows = {row[key]: row for row in state.rows.values()}
        state.base = {row[key]: row for row in state.base.values()}


def _write(
    state: TableState, spec: sc.ScenarioSpec, rows: list[Row], where: str, new_keys_only: bool
) -> None:
    key = _key_column(state, spec, where)
    batch: dict[Any, Row] = {}
    for index, raw in enumerate(rows):
        row = coerce_row(state.schema, raw, f"{where}[{index}]")
        value = row[key]
        if value is None:
            raise StepError(f"{where}[{index}].{key}", "the record key must not be empty")
        if value in batch:
            raise StepError(f"{where}[{index}].{key}", f"key {value!r} appears twice in one write")
        if new_keys_only and value in state.rows:
            raise StepError(f"{where}[{index}].{key}", f"key {value!r} exists; use an upsert")
        batch[value] = row
    for value, row in batch.items():
        if _newer(state.rows.get(value), row, spec.write_order):
            state.rows[value] = row
            state.written[value] = state.index
        if value not in state.base:
            state.base[value] = copy.deepcopy(row)


def _newer(old: Row | None, new: Row, ordering: str | None) -> bool:
    """Hudi's event-time ordering: an update wins unless its value in the ordering field
    (`ScenarioSpec.write_order`) is older; with none, the later write wins."""
    if ordering is None or old is None or old.get(ordering) is None or new.get(ordering) is None:
        return True
    return new[ordering] >= old[ordering]


def _delete(state: TableState, spec: sc.ScenarioSpec, keys: list[Any], where: str) -> None:
    key = _key_column(state, spec, where)
    key_type = state.schema.column(key).type
    for index, raw in enumerate(keys):
        try:
            value = coerce(raw, key_type)
        except ValueError as exc:
            raise StepError(f"{where}[{index}]", str(exc)) from None
        if value not in state.rows:
            raise StepError(f"{where}[{index}]", f"key {value!r} is not in the table")
        del state.rows[value]
        del state.written[value]


def coerce_row(schema: Schema, raw: Row, where: str) -> Row:
    """`raw` with every column of `schema`, values typed; StepError names a bad field."""
    unknown = [name for name in raw if name not in schema.names]
    if unknown:
        columns = ", ".join(schema.names)
        raise StepError(f"{where}.{unknown[0]}", f"no such column; the table has: {columns}")
    row: Row = {}
    for col in schema.columns:
        try:
            row[col.name] = coerce(raw.get(col.name), col.type)
        except ValueError as exc:
            raise StepError(f"{where}.{col.name}", str(exc)) from None
    return row


def _key_column(state: TableState, spec: sc.ScenarioSpec, where: str) -> str:
    if spec.key not in state.schema.names:
        raise StepError(where, f"the record key column {spec.key!r} is no longer in the table")
    return spec.key


def _require_columns(schema: Schema, spec: sc.ScenarioSpec, where: str) -> None:
    if len(set(schema.names)) != len(schema.names):
        raise StepError(where, "column names must be unique")
    for role, name in (("key", spec.key), *_orderings(spec)):
        if name not in schema.names:
            raise StepError(role, f"{name!r} is not a column of the schema")
    for index, name in enumerate(spec.partition_by):
        if name not in schema.names:
            raise StepError(f"partition_by[{index}]", f"{name!r} is not a column of the schema")


def _orderings(spec: sc.ScenarioSpec) -> list[tuple[str, str]]:
    """(field, column) of each ordering field the scenario gives a format; StepError where one
    is given twice (the old `precombine` beside its new place) or a format that needs one
    (`TableFormat.ordering_required`) has none."""
    original = getattr(spec.formats, ORIGINAL, None)
    if spec.precombine is not None and original is not None and original.ordering is not None:
        new = f"formats.{ORIGINAL}.ordering"
        raise StepError(
            "precombine", f"the old spelling of {new}, which the scenario gives too; keep {new}"
        )
    found = []
    for table_format in FORMATS.values():
        ordering = spec.ordering(table_format.name)
        where = spec.ordering_path(table_format.name)
        if ordering is not None:
            found.append((where, ordering))
        elif table_format.ordering_required:
            raise StepError(
                where,
                f"{table_format.title} tables need an ordering field ({table_format.title}'s "
                f"{table_format.ordering_field}): the column whose larger value wins when two "
                f"writes carry the same key; for example `formats: {{{table_format.name}: "
                "{ordering: ts}}`",
            )
    return found


def _for_all_rows(state: TableState, change: Any) -> None:
    for rows in (state.rows, state.base):
        for row in rows.values():
            change(row)


def _sort_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)
