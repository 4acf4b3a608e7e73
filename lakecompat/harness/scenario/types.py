"""Column types of a scenario: parsing, Arrow and Spark SQL spellings, value conversion.

Simple types: boolean, int, long, float, double, string, date, timestamp (Spark's TIMESTAMP,
an instant; every engine runs in UTC), timestamp_ntz (TIMESTAMP_NTZ, a wall-clock date-time)
and binary. Scenario files write timestamps as ISO text (`'2024-01-02 03:04:05.123456'`,
a zone such as `Z` or `+01:00` only for `timestamp`) and binary values as base64 text
(`'YWJj'` is the three bytes `abc`; harness.casts has the details).

Besides the simple types and decimals there are nested types, spelled as in Spark SQL:
`struct<x:int,y:string>`, `array<int>`, `map<string,int>` (map keys are strings). A nested
field is addressed by a dotted path, as in Spark's ALTER TABLE: `point.x`, `items.element.qty`
(inside array elements), `attrs.value.note` (inside map values).
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from lakecompat.engines.answers import arrow_type, timestamp_text
from lakecompat.harness.scenario import casts

SIMPLE_TYPES = (
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "string",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
)
_DECIMAL = re.compile(r"^decimal\((\d{1,2}),\s*(\d{1,2})\)$")
_TIMESTAMPS = ("timestamp", "timestamp_ntz")
_INT_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_SPARK_NAMES = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "binary": "BINARY",
}


NESTED = ("struct", "array", "map")
#: Avro's type promotions: a value of the first type is written into a column of the second.
PROMOTIONS = frozenset(
    {
        ("int", "long"),
        ("int", "float"),
        ("int", "double"),
        ("long", "float"),
        ("long", "double"),
        ("float", "double"),
    }
)
_FIELD = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")
MAX_DEPTH = 5


@dataclass(frozen=True)
class ColumnType:
    """A scenario column type: a simple type, decimal(p,s), struct, array or map."""

    name: str
    precision: int = 0
    scale: int = 0
    #: struct fields in order; for array the element is `("element", type)`, for map the
    #: value is `("value", type)` (keys are strings).
    fields: tuple[tuple[str, ColumnType], ...] = ()

    def __str__(self) -> str:
        if self.is_decimal:
            return f"decimal({self.precision},{self.scale})"
        if self.name == "struct":
            return "struct<" + ",".join(f"{n}:{t}" for n, t in self.fields) + ">"
        if self.name == "array":
            return f"array<{self.fields[0][1]}>"
        if self.name == "map":
            return f"map<string,{self.fields[0][1]}>"
        return self.name

    @property
    def is_decimal(self) -> bool:
        return self.name == "decimal"

    @property
    def is_nested(self) -> bool:
        return self.name in NESTED

    def child(self, segment: str) -> ColumnType:
        """The type of a struct field, `element` of an array or `value` of a map."""
        for name, kind in self.fields:
            if name == segment:
                return kind
        raise ValueError(f"{self} has no field {segment!r}")

    def arrow(self) -> pa.DataType:
        """The Arrow type every engine answer is compared in."""
        if self.is_decimal:
            return pa.decimal128(self.precision, self.scale)
        if self.name == "struct":
            return pa.struct([pa.field(n, t.arrow()) for n, t in self.fields])
        if self.name == "array":
            return pa.list_(self.fields[0][1].arrow())
        if self.name == "map":
            return pa.map_(pa.string(), self.fields[0][1].arrow())
        # The simple types in the form every reader answers in (Spark's type names).
        return arrow_type(_SPARK_NAMES[self.name].lower())

    def spark_sql(self) -> str:
        """The Spark SQL spelling, as used in DDL and DataFrame schemas."""
        if self.is_decimal:
            return f"DECIMAL({self.precision},{self.scale})"
        if self.name == "struct":
            return "STRUCT<" + ", ".join(f"`{n}`: {t.spark_sql()}" for n, t in self.fields) + ">"
        if self.name == "array":
            return f"ARRAY<{self.fields[0][1].spark_sql()}>"
        if self.name == "map":
            return f"MAP<STRING, {self.fields[0][1].spark_sql()}>"
        return _SPARK_NAMES[self.name]


def parse_type(text: str) -> ColumnType:
    """Parse `int`, `decimal(10,2)`, `struct<x:int>`, ...; ValueError names what is accepted."""
    spelled = re.sub(r"\s+", "", str(text).strip().lower())
    parsed, rest = _parse(spelled, 0, str(text))
    if rest:
        raise ValueError(_unknown(str(text)))
    return parsed


def _parse(text: str, depth: int, original: str) -> tuple[ColumnType, str]:
    """Parse one type at the start of `text`; return it and what follows."""
    if depth > MAX_DEPTH:
        raise ValueError(f"type {original!r} nests deeper than {MAX_DEPTH} levels")
    for simple in sorted(SIMPLE_TYPES, key=len, reverse=True):
        if text.startswith(simple) and not text[len(simple) : len(simple) + 1].isalnum():
            return ColumnType(simple), text[len(simple) :]
    match = re.match(r"decimal\((\d{1,2}),(\d{1,2})\)", text)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if 1 <= precision <= 38 and scale <= precision:
            return ColumnType("decimal", precision, scale), text[match.end() :]
    if text.startswith("array<"):
        element, rest = _parse(text[6:], depth + 1, original)
        return ColumnType("array", fields=(("element", element),)), _close(rest, original)
    if text.startswith("map<string,"):
        value, rest = _parse(text[11:], depth + 1, original)
        return ColumnType("map", fields=(("value", value),)), _close(rest, original)
    if text.startswith("struct<"):
        rest, fields = text[7:], []
        while True:
            name, colon, rest = rest.partition(":")
            if not colon or not _FIELD.match(name) or name in dict(fields):
                raise ValueError(f"type {original!r}: bad or repeated struct field name {name!r}")
            kind, rest = _parse(rest, depth + 1, original)
            fields.append((name, kind))
            if rest.startswith(","):
                rest = rest[1:]
                continue
            return ColumnType("struct", fields=tuple(fields)), _close(rest, original)
    raise ValueError(_unknown(original))


def _unknown(original: str) -> str:
    accepted = ", ".join(
        (
            *SIMPLE_TYPES,
            "decimal(p,s) with 1<=p<=38, s<=p",
            "struct<name:type,...>",
            "array<type>",
            "map<string,type>",
        )
    )
    return f"unknown type {original!r}; expected one of: {accepted}"


def _close(rest: str, original: str) -> str:
    if not rest.startswith(">"):
        raise ValueError(f"type {original!r}: expected '>'")
    return rest[1:]


def split_path(path: str) -> list[str]:
    """`point.x` → ["point", "x"]."""
    return path.split(".")


def type_at(ctype: ColumnType, segments: list[str]) -> ColumnType:
    """The type at a nested path below `ctype`; ValueError names the missing part."""
    for segment in segments:
        if not ctype.is_nested:
            raise ValueError(f"{ctype} has no field {segment!r}")
        ctype = ctype.child(segment)
    return ctype


def with_child(
    ctype: ColumnType,
    segments: list[str],
    change: Callable[[tuple[tuple[str, ColumnType], ...]], tuple[tuple[str, ColumnType], ...]],
) -> ColumnType:
    """`ctype` with the field list of the nested type at `segments` replaced by `change(...)`.

    The field list of an array is its `element`, of a map its `value`.
    """
    if not segments:
        return replace(ctype, fields=change(ctype.fields))
    head, rest = segments[0], segments[1:]
    inner = with_child(ctype.child(head), rest, change)
    return replace(ctype, fields=tuple((n, inner if n == head else t) for n, t in ctype.fields))


def map_at(value: Any, ctype: ColumnType, segments: list[str], change: Callable[[Any], Any]) -> Any:
    """`value` (of type `ctype`) with `change` applied to every value found at `segments`."""
    if value is None:
        return None
    if not segments:
        return change(value)
    head, rest = segments[0], segments[1:]
    child = ctype.child(head)
    if ctype.name == "array":
        return [map_at(v, child, rest, change) for v in value]
    if ctype.name == "map":
        return {k: map_at(v, child, rest, change) for k, v in value.items()}
    return {**value, head: map_at(value.get(head), child, rest, change)}


def coerce(value: object, ctype: ColumnType) -> object:
    """Turn a value read from YAML into the Python value of `ctype`; ValueError if it cannot."""
    if value is None:
        return None
    if ctype.is_nested:
        return _coerce_nested(value, ctype)
    name = ctype.name
    if name == "boolean" and isinstance(value, bool):
        return value
    if name in _INT_RANGES and isinstance(value, int) and not isinstance(value, bool):
        low, high = _INT_RANGES[name]
        if low <= value <= high:
            return value
        raise ValueError(f"{value} is out of range for {name}")
    if (
        name in ("float", "double")
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        return _to_float32(float(value)) if name == "float" else float(value)
    if name == "string" and isinstance(value, str):
        return value
    if name == "date":
        return _coerce_date(value)
    if name in _TIMESTAMPS and isinstance(value, str):
        return casts.timestamp_from_text(value, with_zone=name == "timestamp")
    if name in _TIMESTAMPS and isinstance(value, dt.datetime):
        return casts.timestamp_of(value, with_zone=name == "timestamp")
    if name == "binary" and isinstance(value, str):
        return casts.binary_from_text(value)
    if name == "binary" and isinstance(value, bytes | bytearray):
        return bytes(value)
    if ctype.is_decimal and isinstance(value, int | float | str | Decimal):
        return _coerce_decimal(value, ctype)
    raise ValueError(f"{value!r} is not a {ctype}")


def _coerce_nested(value: object, ctype: ColumnType) -> object:
    child = ctype.fields[0][1] if ctype.fields else None
    if ctype.name == "array" and isinstance(value, list) and child is not None:
        return [coerce(v, child) for v in value]
    if ctype.name == "map" and isinstance(value, dict) and child is not None:
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{value!r} is not a {ctype}: map keys must be strings")
        return {k: coerce(v, child) for k, v in value.items()}
    if ctype.name == "struct" and isinstance(value, dict):
        known = dict(ctype.fields)
        unknown = [k for k in value if k not in known]
        if unknown:
            raise ValueError(f"{ctype} has no field {unknown[0]!r}")
        return {n: coerce(value.get(n), t) for n, t in ctype.fields}
    raise ValueError(f"{value!r} is not a {ctype}")


def to_arrow_value(value: object, ctype: ColumnType) -> object:
    """A Python value in the form `pa.array` takes for `ctype` (maps as key/value pairs)."""
    if value is None or not ctype.is_nested:
        return value
    if ctype.name == "map":
        child = ctype.fields[0][1]
        return [(k, to_arrow_value(v, child)) for k, v in value.items()]  # type: ignore[union-attr]
    if ctype.name == "array":
        child = ctype.fields[0][1]
        return [to_arrow_value(v, child) for v in value]  # type: ignore[union-attr]
    return {n: to_arrow_value(value.get(n), t) for n, t in ctype.fields}  # type: ignore[union-attr]


def convert(value: object, source: ColumnType, target: ColumnType) -> object:
    """The logical value after a column's type changes from `source` to `target` (SQL CAST)."""
    if value is None or source == target:
        return value
    if source.is_nested or target.is_nested:
        return None  # no SQL cast between a nested type and another type
    try:
        return _convert(value, source, target)
    except (ValueError, ArithmeticError):
        return None


def _convert(value: object, source: ColumnType, target: ColumnType) -> object:
    name = target.name
    if name == "string":
        return _text_of(value)
    if name == "date":
        if isinstance(value, dt.datetime):
            return casts.timestamp_of(value, with_zone=False).date()
        return _coerce_date(value) if isinstance(value, str) else None
    if name in _TIMESTAMPS:
        return casts.timestamp_of(value, with_zone=name == "timestamp")
    if name == "binary":
        return value.encode("utf-8") if isinstance(value, str) else None
    if name == "boolean":
        return None if isinstance(value, dt.date | bytes) else casts.boolean_of(value)
    if isinstance(value, bool):  # CAST(boolean AS number) is 1 or 0
        value = int(value)
    if isinstance(value, dt.datetime) and source.name == "timestamp":
        value = casts.epoch_seconds(value)  # CAST(timestamp AS number): seconds since the epoch
        if name in _INT_RANGES:
            value = int(value.to_integral_value(rounding=ROUND_FLOOR))
    if isinstance(value, dt.date | bytes):
        return None
    if name in _INT_RANGES:
        number = int(Decimal(str(value)))
        return coerce(number, target)
    if name in ("float", "double"):
        return coerce(float(value), target)
    if target.is_decimal:
        return _coerce_decimal(value, target)
    raise ValueError(f"no conversion from {source} to {target}")


def _text_of(value: object) -> str:
    """CAST(value AS STRING)."""
    if isinstance(value, dt.datetime):
        return timestamp_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return _plain_str(value)


def _plain_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _to_float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _coerce_date(value: object) -> dt.date:
    if isinstance(value, dt.datetime):
        raise ValueError(f"{value!r} is a timestamp, not a date")
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a date (expected YYYY-MM-DD)") from None
    raise ValueError(f"{value!r} is not a date (expected YYYY-MM-DD)")


def _coerce_decimal(value: object, ctype: ColumnType) -> Decimal:
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number for {ctype}") from None
    quantized = number.quantize(Decimal(1).scaleb(-ctype.scale), rounding=ROUND_HALF_UP)
    if len(quantized.as_tuple().digits) > ctype.precision:
        raise ValueError(f"{value!r} does not fit {ctype}")
    return quantized
