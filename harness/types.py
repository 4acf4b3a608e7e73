"""Column types of a scenario: parsing, Arrow and Spark SQL spellings, value conversion."""

from __future__ import annotations

import datetime as dt
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import pyarrow as pa

SIMPLE_TYPES = ("boolean", "int", "long", "float", "double", "string", "date")
_DECIMAL = re.compile(r"^decimal\((\d{1,2}),\s*(\d{1,2})\)$")
_INT_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
_SPARK_NAMES = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "date": "DATE",
}
_ARROW = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "date": pa.date32(),
}


@dataclass(frozen=True)
class ColumnType:
    """A scenario column type: one of SIMPLE_TYPES or decimal(precision, scale)."""

    name: str
    precision: int = 0
    scale: int = 0

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})" if self.is_decimal else self.name

    @property
    def is_decimal(self) -> bool:
        return self.name == "decimal"

    def arrow(self) -> pa.DataType:
        """The Arrow type every engine answer is compared in."""
        if self.is_decimal:
            return pa.decimal128(self.precision, self.scale)
        return _ARROW[self.name]

    def spark_sql(self) -> str:
        """The Spark SQL spelling, as used in DDL and DataFrame schemas."""
        if self.is_decimal:
            return f"DECIMAL({self.precision},{self.scale})"
        return _SPARK_NAMES[self.name]


def parse_type(text: str) -> ColumnType:
    """Parse `int`, `decimal(10,2)`, ...; ValueError names the accepted spellings."""
    spelled = str(text).strip().lower()
    if spelled in SIMPLE_TYPES:
        return ColumnType(spelled)
    match = _DECIMAL.match(spelled)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if 1 <= precision <= 38 and scale <= precision:
            return ColumnType("decimal", precision, scale)
    accepted = ", ".join((*SIMPLE_TYPES, "decimal(p,s) with 1<=p<=38, s<=p"))
    raise ValueError(f"unknown type {text!r}; expected one of: {accepted}")


def coerce(value: object, ctype: ColumnType) -> object:
    """Turn a value read from YAML into the Python value of `ctype`; ValueError if it cannot."""
    if value is None:
        return None
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
    if ctype.is_decimal and isinstance(value, int | float | str | Decimal):
        return _coerce_decimal(value, ctype)
    raise ValueError(f"{value!r} is not a {ctype}")


def convert(value: object, source: ColumnType, target: ColumnType) -> object:
    """The logical value after a column's type changes from `source` to `target` (SQL CAST)."""
    if value is None or source == target:
        return value
    try:
        return _convert(value, source, target)
    except (ValueError, ArithmeticError):
        return None


def _convert(value: object, source: ColumnType, target: ColumnType) -> object:
    name = target.name
    if name == "string":
        return value.isoformat() if isinstance(value, dt.date) else _plain_str(value)
    if name == "date":
        return _coerce_date(value) if isinstance(value, str) else None
    if isinstance(value, dt.date):
        return None
    if name in _INT_RANGES:
        number = int(Decimal(str(value)))
        return coerce(number, target)
    if name in ("float", "double"):
        return coerce(float(value), target)
    if target.is_decimal:
        return _coerce_decimal(value, target)
    if name == "boolean":
        return bool(value)
    raise ValueError(f"no conversion from {source} to {target}")


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
