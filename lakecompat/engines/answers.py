"""The answer form every reader returns: an Arrow table whose nested values are canonical JSON
text, timestamps and binary values spelled one way, and the Arrow type of each SQL type name.

Engines hand values over in different shapes (Spark rows, Hive JSON text, Trino tuples); each
reader turns its answer into this form, and the oracle's side is compared in it too.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any

import pyarrow as pa


def canonical_json(value: Any) -> str | None:
    """A nested value as JSON with sorted keys: the form nested answers are compared in."""
    if value is None:
        return None
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime):
        return timestamp_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return binary_text(value)
    if isinstance(value, Decimal):
        return str(value)
    return value


def timestamp_text(value: dt.datetime) -> str:
    """CAST(timestamp AS STRING) in UTC: `2024-01-02 03:04:05.12`, trailing zeros dropped."""
    if value.tzinfo is not None:  # shown as UTC wall-clock time
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    fraction = f"{value.microsecond:06d}".rstrip("0")
    return f"{text}.{fraction}" if fraction else text


def binary_text(value: bytes) -> str:
    """How a binary value shows in JSON evidence and nested values: base64, as written."""
    return base64.b64encode(value).decode("ascii")


def nested_as_json(table: pa.Table) -> pa.Table:
    """Struct, list and map columns as canonical JSON text, the form nested answers compare in.

    Engines hand nested values over in different shapes (Spark rows, Hive JSON text, Trino
    row tuples); each engine turns them into this JSON, and so does the oracle's side here.
    Types inside nested values are therefore compared through their values only.
    """
    columns = []
    for index, column_field in enumerate(table.schema):
        column = table.column(index)
        if pa.types.is_nested(column_field.type):
            values = [canonical_json(_from_arrow(v, column_field.type)) for v in column.to_pylist()]
            column = pa.array(values, type=pa.string())
        columns.append(column)
    names = table.column_names
    return pa.Table.from_arrays(columns, names=names) if names else table


def _from_arrow(value: Any, kind: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(kind):
        return {k: _from_arrow(v, kind.item_type) for k, v in value}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_from_arrow(v, kind.value_type) for v in value]
    if pa.types.is_struct(kind):
        return {f.name: _from_arrow(value.get(f.name), f.type) for f in kind}
    return value


_SIMPLE = {
    "boolean": pa.bool_(),
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
    "binary": pa.binary(),
}

#: The Arrow types of the ANSI SQL type names Trino and Presto answer with (without their
#: parameters; each engine adds its own timestamps, decimals and nested types).
SQL_TYPES = {
    "boolean": pa.bool_(),
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "real": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "varchar": pa.string(),
    "char": pa.string(),
    "varbinary": pa.binary(),
}

_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


def arrow_type(spark_type: str) -> pa.DataType | None:
    """The Arrow type of a Spark simple type string, or None for types we do not map."""
    if spark_type in _SIMPLE:
        return _SIMPLE[spark_type]
    match = _DECIMAL.match(spark_type)
    return pa.decimal128(int(match.group(1)), int(match.group(2))) if match else None
