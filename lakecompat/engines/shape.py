"""A query's shape as readers know it: which columns it selects, which rows it keeps, or whether
it counts them; and how each SQL dialect spells it.

The harness derives shapes from a scenario (`harness.scenario.shapes`); a reader turns one into
its own query. `ALL` is `SELECT *`, every cell's read before shapes existed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

#: The name of `count`'s one answer column.
COUNT_COLUMN = "count"
#: What a variant's name gets when the engine's filter pushdown is turned off in it
#: (`Engine.pushdown_off`): `schema_on_read_off+pushdown_off`.
PUSHDOWN_OFF = "+pushdown_off"
#: What a variant's name gets when Hudi's data skipping (its column statistics index) is
#: turned off in it, and nothing else (`Reading.filter_controls`).
DATA_SKIPPING_OFF = "+data_skipping_off"
#: The controls a filter is read with besides its variant, each turning one path off.
CONTROLS = (PUSHDOWN_OFF, DATA_SKIPPING_OFF)


def base_variant(name: str) -> str:
    """The variant a control variant turns one path off in (`schema_on_read_off` of
    `schema_on_read_off+data_skipping_off`); any other variant's name as it is."""
    for suffix in CONTROLS:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def control_of(name: str) -> str:
    """The control a variant's name ends with (`+pushdown_off`), or "" for none."""
    return next((suffix for suffix in CONTROLS if name.endswith(suffix)), "")


def value_at(row: dict[str, Any], path: str) -> Any:
    """A row's value of a column, or of a field inside struct columns (`point.x`): None under
    a NULL struct, as SQL reads it."""
    value: Any = row
    for name in path.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    return value


@dataclass(frozen=True)
class Predicate:
    """`column op values` on a column, or on a field of a struct column (`point.x`); `type` is
    its (latest) type as a scenario spells it (`double`, `decimal(12,4)`, `string`, ...),
    values are Python values of it (int, float, Decimal, str, date, datetime, bool)."""

    column: str
    type: str
    #: `=`, `between` (two values, both ends included) or `is null` (no values).
    op: str
    values: tuple[Any, ...] = ()

    @property
    def path(self) -> tuple[str, ...]:
        """The column's name, then the struct fields down to the one compared."""
        return tuple(self.column.split("."))

    @property
    def nested(self) -> bool:
        """Whether the predicate is on a field inside a struct column."""
        return len(self.path) > 1

    def holds(self, row: dict[str, Any]) -> bool:
        """Whether a row matches, with SQL's NULL semantics (a field of a NULL struct is
        NULL)."""
        value = value_at(row, self.column)
        if self.op == "is null":
            return value is None
        if value is None:
            return False
        if self.op == "=":
            return bool(value == self.values[0])
        low, high = self.values
        return bool(low <= value <= high)

    def sql(self, dialect: Dialect) -> str:
        """The predicate in `dialect`."""
        column = ".".join(dialect.quote(name) for name in self.path)
        if self.op == "is null":
            return f"{column} IS NULL"
        literals = [dialect.literal(v, self.type) for v in self.values]
        if self.op == "=":
            return f"{column} = {literals[0]}"
        return f"{column} BETWEEN {literals[0]} AND {literals[1]}"

    def describe(self) -> str:
        """As a user reads it: `price = 1.5`, `price BETWEEN 1 AND 3`, `note IS NULL`."""
        return self.sql(PLAIN)


@dataclass(frozen=True)
class Shape:
    """What one query selects: the columns (empty: all), the rows, or their count."""

    name: str
    columns: tuple[str, ...] = ()
    predicate: Predicate | None = None

    @property
    def counts(self) -> bool:
        return self.name == "count"

    @property
    def every_column(self) -> bool:
        """Whether the query selects every column (`SELECT *`, filtered or not)."""
        return not self.columns and not self.counts

    def select_list(self, dialect: Dialect) -> str:
        """What follows SELECT: `*`, the columns, or the count."""
        if self.counts:
            return f"count(*) AS {dialect.quote(COUNT_COLUMN)}"
        return ", ".join(dialect.quote(c) for c in self.columns) or "*"

    def describe(self) -> str:
        """The shape as a query a user would write, `t` for the table."""
        return shape_sql("SELECT * FROM t", self, PLAIN)


ALL = Shape("all")


@dataclass(frozen=True)
class Dialect:
    """How one SQL engine quotes names and spells literals."""

    #: The identifier quote character (`` ` `` or `"`); "" for none.
    quote_char: str
    #: Whether string literals treat a backslash as an escape (Spark, Hive).
    backslash_escapes: bool
    #: The keyword of a timestamp without time zone literal.
    timestamp_ntz: str = "TIMESTAMP"

    def quote(self, name: str) -> str:
        q = self.quote_char
        return f"{q}{name.replace(q, q + q)}{q}" if q else name

    def literal(self, value: Any, type_text: str) -> str:
        """`value` as a literal a user writes for a column of `type_text`."""
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, str):
            text = value.replace("\\", "\\\\") if self.backslash_escapes else value
            return "'" + text.replace("'", "''") + "'"
        if isinstance(value, dt.datetime):
            return f"{self.timestamp_ntz} '{value.isoformat(sep=' ')}'"
        if isinstance(value, dt.date):
            return f"DATE '{value.isoformat()}'"
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, int | Decimal):
            return str(value)
        raise ValueError(f"no SQL literal for {value!r} ({type_text})")


#: How the shapes read in reports and reasons.
PLAIN = Dialect(quote_char="", backslash_escapes=False)
SPARK = Dialect(quote_char="`", backslash_escapes=True, timestamp_ntz="TIMESTAMP_NTZ")
HIVE = Dialect(quote_char="`", backslash_escapes=True)
TRINO = Dialect(quote_char='"', backslash_escapes=False)


def shape_sql(sql: str, shape: Shape, dialect: Dialect) -> str:
    """`sql` (statements ending in `SELECT * FROM <source>`) with its last statement in
    `shape`: the shape's select list, and its predicate as the WHERE clause."""
    if shape == ALL:
        return sql
    head, _, last = sql.rpartition("\n")
    prefix = "SELECT * FROM "
    if not last.startswith(prefix) or " WHERE " in last:
        raise ValueError(f"cannot give a shape to a query that is not `SELECT * FROM t`: {last}")
    where = f" WHERE {shape.predicate.sql(dialect)}" if shape.predicate else ""
    shaped = f"SELECT {shape.select_list(dialect)} FROM {last.removeprefix(prefix)}{where}"
    return f"{head}\n{shaped}" if head else shaped
