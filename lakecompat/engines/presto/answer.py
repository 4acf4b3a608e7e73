"""Presto's answer as Arrow: its column types (`integer`, `decimal(10,2)`, `row(x integer)`,
...) parsed, and its JSON values turned into the answer form of `engines.answers`.

Presto sends decimals as text, dates and timestamps as text, binary values in base64, NaN and
the infinities as text. A row, array or map column's value comes as JSON text (Presto 0.287
writes it so): in it a row is the list of its fields' values, a map a JSON object.
Presto 0.287's `timestamp` has millisecond precision: its columns are Arrow `timestamp[ms]`,
which the oracle's `timestamp[us]` tells apart, as it should.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa

from lakecompat.engines.answers import SQL_TYPES, canonical_json

_SIMPLE = {
    **SQL_TYPES,
    # Presto 0.287's timestamps have millisecond precision.
    "timestamp": pa.timestamp("ms"),
    "timestamp with time zone": pa.timestamp("ms", tz="UTC"),
}
NESTED = ("row", "array", "map")


@dataclass(frozen=True)
class PrestoType:
    """A parsed Presto type: its base name, its type parameters (an array's element, a map's
    key and value, a row's fields, named where `names` has a name) and numbers (a decimal's
    precision and scale, a varchar's length)."""

    base: str
    parameters: tuple[PrestoType, ...] = ()
    names: tuple[str | None, ...] = ()
    numbers: tuple[int, ...] = ()

    @property
    def nested(self) -> bool:
        return self.base in NESTED


def parse_type(text: str) -> PrestoType:
    """`row(x integer, "y z" array(varchar))` as a `PrestoType`."""
    text = text.strip()
    opening = text.find("(")
    if opening < 0 or not text.endswith(")"):
        return PrestoType(text.lower())
    base = text[:opening].strip().lower()
    parts = _split_top_level(text[opening + 1 : -1])
    if all(part.strip().lstrip("-").isdigit() for part in parts):
        return PrestoType(base, numbers=tuple(int(part) for part in parts))
    if base != "row":
        return PrestoType(base, tuple(parse_type(part) for part in parts))
    fields = [_row_field(part) for part in parts]
    return PrestoType(base, tuple(f[1] for f in fields), tuple(f[0] for f in fields))


def _row_field(text: str) -> tuple[str | None, PrestoType]:
    """A row field, `name type` (the name may be double-quoted) or a bare type."""
    text = text.strip()
    if text.startswith('"'):
        end = text.index('"', 1)
        while text[end + 1 : end + 2] == '"':  # a doubled quote inside the name
            end = text.index('"', end + 2)
        return text[1:end].replace('""', '"'), parse_type(text[end + 1 :])
    name, _, rest = text.partition(" ")
    if not rest or "(" in name:
        return None, parse_type(text)
    return name, parse_type(rest)


def _split_top_level(text: str) -> list[str]:
    """`a integer, b row(c integer, d varchar)` split at the commas outside parentheses and
    quotes."""
    parts, depth, start, quoted = [], 0, 0, False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def arrow_type(kind: PrestoType) -> pa.DataType:
    """The Arrow type of an answer column of Presto type `kind` (nested ones: JSON text)."""
    if kind.base == "decimal" and len(kind.numbers) == 2:
        return pa.decimal128(*kind.numbers)
    return _SIMPLE.get(kind.base, pa.string())


def plain_value(value: Any, kind: PrestoType) -> Any:
    """A value from Presto's JSON as the Python value of its type: a row as a dict of its
    named fields, a map or an array with their values converted."""
    if value is None:
        return None
    if kind.nested and isinstance(value, str):
        value = json.loads(value)
    if kind.base == "row":
        names = [name or f"field{i}" for i, name in enumerate(kind.names)]
        return {
            name: plain_value(v, t)
            for name, v, t in zip(names, value, kind.parameters, strict=True)
        }
    if kind.base == "array":
        return [plain_value(v, kind.parameters[0]) for v in value]
    if kind.base == "map":
        # JSON keys are text, as the oracle's canonical JSON has them.
        return {k: plain_value(v, kind.parameters[1]) for k, v in value.items()}
    if kind.base == "decimal":
        return Decimal(value)
    if kind.base in ("real", "double"):
        return float(value)  # NaN and the infinities come as text
    if kind.base == "varbinary":
        return base64.b64decode(value)
    if kind.base == "date":
        return dt.date.fromisoformat(value)
    if kind.base == "timestamp":
        return dt.datetime.fromisoformat(value)
    if kind.base == "timestamp with time zone":
        return _zoned(value)
    if kind.base in ("varchar", "char"):
        return str(value)
    return value


def _zoned(text: str) -> dt.datetime:
    """`2024-01-02 03:04:05.123 UTC` (or with an offset or a zone name) as an aware time."""
    moment, _, zone = text.rpartition(" ")
    value = dt.datetime.fromisoformat(moment)
    if zone.startswith(("+", "-")):
        return dt.datetime.fromisoformat(f"{moment}{zone}")
    return value.replace(tzinfo=ZoneInfo(zone))


def to_arrow(columns: list[dict[str, Any]], rows: list[list[Any]]) -> pa.Table:
    """The answer table: nested values as canonical JSON text, other values in their Arrow
    type."""
    fields, arrays = [], []
    for index, column in enumerate(columns):
        kind = parse_type(column["type"])
        values = [plain_value(row[index], kind) for row in rows]
        if kind.nested:
            arrow: pa.DataType = pa.string()
            values = [canonical_json(v) for v in values]
        else:
            arrow = arrow_type(kind)
            if arrow == pa.string():
                values = [None if v is None else str(v) for v in values]
        fields.append(pa.field(column["name"], arrow))
        arrays.append(pa.array(values, type=arrow))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
