"""Trino's answers and errors as lakecompat records them: result columns as Arrow (nested
values as canonical JSON text), a query's failure as Java's stack trace, and a stable first
line for messages that name whichever split failed first."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pyarrow as pa

from lakecompat.engines.answers import SQL_TYPES, canonical_json

NESTED = ("row", "array", "map")
#: Trino reads a table's splits in parallel and reports the first that fails, so which Parquet
#: column (and which table type) this error names depends on timing. The reason keeps what
#: stays the same; Trino's whole message follows on the next line, for the evidence.
_UNSUPPORTED_COLUMN = re.compile(
    r"^Unsupported Trino column type \(.*\) for Parquet column \(.*\)$"
)
#: A filter's statistics check of an old file (trinodb/trino#30544): the statistics and the
#: file it names are those of whichever file failed first.
_CORRUPTED_STATISTICS = re.compile(
    r'Malformed Parquet file\. Corrupted statistics for column ("[^"]*")'
)
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_SIMPLE = SQL_TYPES


def trino_arrow_type(type_name: str) -> pa.DataType:
    """The Arrow type of a Trino result column type (`integer`, `decimal(10,2)`, ...)."""
    base = type_name.split("(", 1)[0].strip()
    if base in _SIMPLE:
        return _SIMPLE[base]
    match = _DECIMAL.match(type_name)
    if match:
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    if base.startswith("timestamp"):
        zone = "UTC" if "with time zone" in type_name else None
        return pa.timestamp("us", tz=zone)
    return pa.string()


def to_arrow(description: list[Any], rows: list[list[Any]]) -> pa.Table:
    """Build the answer table from the client's column descriptions and Python values.

    Row, array and map values become canonical JSON text, the form nested values compare in.
    """
    columns = [(column[0], trino_arrow_type(column[1])) for column in description]
    nested = [column[1].split("(", 1)[0].strip() in NESTED for column in description]
    arrays = []
    for index, (_, kind) in enumerate(columns):
        values = [row[index] for row in rows]
        if nested[index]:
            values = [canonical_json(_plain(v)) for v in values]
        elif kind == pa.string():
            values = [None if v is None else _text(v) for v in values]
        arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, schema=pa.schema(columns))


def _plain(value: Any) -> Any:
    """Trino's row tuples (with field names), lists and dicts as plain Python values."""
    names = getattr(value, "_names", None)
    if names is not None:
        return {name: _plain(v) for name, v in zip(names, value, strict=True)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    """A value Trino returned for a column compared as text (dates in ISO form)."""
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def failure_trace(info: dict[str, Any], caused: bool = False) -> str:
    """A Trino query's `failureInfo` (the exception on the coordinator, with its causes) in
    Java's stack trace form."""
    if not info:
        return ""
    prefix = "Caused by: " if caused else ""
    lines = [f"{prefix}{info.get('type', '?')}: {info.get('message') or ''}".rstrip(": ")]
    lines += [f"\tat {frame}" for frame in info.get("stack") or []]
    cause = failure_trace(info.get("cause") or {}, caused=True)
    return "\n".join(lines + ([cause] if cause else []))


def error_message(error_name: str, message: str) -> str:
    """`NAME: message`; a message that depends on which split failed first gets a stable first
    line, with Trino's own message after it."""
    text = f"{error_name}: {message}"
    if _UNSUPPORTED_COLUMN.match(message):
        stable = "Unsupported Trino column type for a column of an old Parquet file"
        return f"{error_name}: {stable} (Trino's message names the first that failed)\n{text}"
    corrupted = _CORRUPTED_STATISTICS.match(message)
    if corrupted:
        # The statistics and the file it names are those of whichever file failed first.
        stable = f"Malformed Parquet file. Corrupted statistics for column {corrupted.group(1)}"
        return f"{error_name}: {stable} (Trino's message names the first file that failed)\n{text}"
    return text
