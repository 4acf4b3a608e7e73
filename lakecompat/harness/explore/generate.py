"""Generated evolution sequences for `lakecompat explore`: a Hypothesis strategy of scenarios.

A sequence is a scenario file's content (`ScenarioSpec` data): a key `id` and Hudi's ordering
field `ts` (`formats: {hudi: {ordering: ts}}`), one to three data columns (primitive and nested
types), one to three seed rows, and one to four steps drawn from what applies to the table as
it stands: add, drop, rename, retype and move a column, upsert and delete rows, compaction and
clustering. Every sequence is valid: the
strategy tracks the schema and the live keys as it draws, the way the oracle evolves them.

Choices are drawn simplest first (fewer columns, rows and steps, `int` before other types,
copy-on-write before merge-on-read), so Hypothesis shrinks a failing sequence toward the
smallest one that still fails.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

#: Column types, simplest first.
TYPES = (
    "int",
    "string",
    "long",
    "double",
    "decimal(10,2)",
    "date",
    "timestamp",
    "boolean",
    "struct<a:int,b:string>",
    "array<int>",
    "map<string,int>",
)
#: Type changes Hudi's schema evolution accepts (widening, and to text).
PROMOTIONS = {
    "int": ("long", "double", "string"),
    "long": ("double", "string"),
    "double": ("string",),
    "decimal(10,2)": ("decimal(12,2)", "string"),
    "date": ("string",),
}
OPS = (
    "rename_column",
    "add_column",
    "drop_column",
    "change_type",
    "move_column",
    "upsert",
    "delete",
    "compaction",
    "clustering",
)
_TEXT = st.text(alphabet="abcxyz", max_size=4)
_INT = st.integers(min_value=0, max_value=100)


def values(kind: str) -> st.SearchStrategy[Any]:
    """Values of a column type, as a scenario file spells them."""
    simple: dict[str, st.SearchStrategy[Any]] = {
        "int": _INT,
        "long": st.integers(min_value=0, max_value=5_000_000_000),
        "string": _TEXT,
        "double": st.integers(min_value=-400, max_value=400).map(lambda n: n / 4),
        "decimal(10,2)": st.integers(min_value=0, max_value=99_999).map(lambda c: f"{c / 100:.2f}"),
        "decimal(12,2)": st.integers(min_value=0, max_value=99_999).map(lambda c: f"{c / 100:.2f}"),
        "date": st.dates(dt.date(2000, 1, 1), dt.date(2030, 12, 31)).map(dt.date.isoformat),
        "timestamp": st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2030, 12, 31)).map(
            lambda t: t.replace(microsecond=0).isoformat(sep=" ")
        ),
        "boolean": st.booleans(),
        "struct<a:int,b:string>": st.fixed_dictionaries({"a": _INT, "b": _TEXT}),
        "array<int>": st.lists(_INT, max_size=2),
        "map<string,int>": st.dictionaries(st.sampled_from(["k1", "k2"]), _INT, max_size=2),
    }
    return simple[kind]


class _Table:
    """The table as the steps drawn so far left it: columns in order, live keys, next names."""

    def __init__(self, columns: list[tuple[str, str]]) -> None:
        self.columns = columns
        self.keys: list[int] = []
        self.next_column = len(columns)
        self.next_ts = 100

    @property
    def data(self) -> list[tuple[str, str]]:
        return [c for c in self.columns if c[0] not in ("id", "ts")]

    def row(self, draw: Any, key: int) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, kind in self.columns:
            if name == "id":
                found[name] = key
            elif name == "ts":
                found[name] = self.next_ts
            else:
                found[name] = draw(values(kind))
        return found

    def new_name(self, prefix: str) -> str:
        self.next_column += 1
        return f"{prefix}{self.next_column}"


@st.composite
def sequences(draw: Any) -> dict[str, Any]:
    """One valid scenario (its file content) with a generated evolution sequence."""
    count = draw(st.integers(min_value=1, max_value=3))
    kinds = [draw(st.sampled_from(TYPES)) for _ in range(count)]
    columns = [("id", "int"), *[(f"c{i + 1}", k) for i, k in enumerate(kinds)], ("ts", "long")]
    table = _Table(columns)
    rows = [table.row(draw, key) for key in range(1, draw(st.integers(1, 3)) + 1)]
    table.keys = [row["id"] for row in rows]
    schema = [{"name": n, "type": k} for n, k in columns]
    table_type = draw(st.sampled_from(["cow", "mor"]))
    steps = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        table.next_ts += 100
        op = draw(st.sampled_from([op for op in OPS if _applies(op, table)]))
        steps.append(_step(draw, op, table))
    return {
        "title": "Generated: " + ", then ".join(describe(step) for step in steps),
        "table_types": [table_type],
        "key": "id",
        "formats": {"hudi": {"ordering": "ts"}},
        "schema": schema,
        "rows": rows,
        "steps": steps,
    }


def _applies(op: str, table: _Table) -> bool:
    data = table.data
    return {
        "rename_column": bool(data),
        "add_column": len(data) < 5,
        "drop_column": len(data) >= 2,
        "change_type": any(kind in PROMOTIONS for _, kind in data),
        "move_column": len(data) >= 2,
        "delete": len(table.keys) >= 2,
    }.get(op, True)


def _step(draw: Any, op: str, table: _Table) -> dict[str, Any]:
    """Draw one step's parameters, and apply it to `table`."""
    data = table.data
    if op == "rename_column":
        name = draw(st.sampled_from([n for n, _ in data]))
        new = table.new_name("r")
        table.columns = [(new if n == name else n, k) for n, k in table.columns]
        return {"op": op, "column": name, "to": new}
    if op == "add_column":
        kind = draw(st.sampled_from(TYPES))
        name = table.new_name("c")
        table.columns.append((name, kind))
        return {"op": op, "column": {"name": name, "type": kind}}
    if op == "drop_column":
        name = draw(st.sampled_from([n for n, _ in data]))
        table.columns = [c for c in table.columns if c[0] != name]
        return {"op": op, "column": name}
    if op == "change_type":
        name, kind = draw(st.sampled_from([c for c in data if c[1] in PROMOTIONS]))
        target = draw(st.sampled_from(PROMOTIONS[kind]))
        table.columns = [(n, target if n == name else k) for n, k in table.columns]
        return {"op": op, "column": name, "to": target}
    if op == "move_column":
        name = draw(st.sampled_from([n for n, _ in data[1:]]))
        moved = next(c for c in table.columns if c[0] == name)
        rest = [c for c in table.columns if c[0] != name]
        table.columns = [rest[0], moved, *rest[1:]]  # right after the key
        return {"op": op, "column": name, "after": "id"}
    if op == "upsert":
        keys = sorted(set(table.keys) | {max(table.keys, default=0) + 1})
        chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True))
        table.keys = sorted(set(table.keys) | set(chosen))
        return {"op": op, "rows": [table.row(draw, key) for key in chosen]}
    if op == "delete":
        key = draw(st.sampled_from(table.keys))
        table.keys = [k for k in table.keys if k != key]
        return {"op": op, "keys": [key]}
    return {"op": op}


def describe(step: dict[str, Any]) -> str:
    """A step in a few words, for titles and progress."""
    op = step["op"]
    if op == "rename_column":
        return f"rename {step['column']} to {step['to']}"
    if op == "add_column":
        return f"add {step['column']['name']} {step['column']['type']}"
    if op == "drop_column":
        return f"drop {step['column']}"
    if op == "change_type":
        return f"retype {step['column']} to {step['to']}"
    if op == "move_column":
        return f"move {step['column']} after {step['after']}"
    if op == "upsert":
        return f"upsert {len(step['rows'])} row(s)"
    if op == "delete":
        return f"delete key {step['keys'][0]}"
    return op
