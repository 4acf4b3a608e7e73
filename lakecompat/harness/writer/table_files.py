"""Reading a table's data files, whatever the format: the columns and types a Parquet file's
footer holds, and file paths as the evidence shows them."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


class TableFileError(ValueError):
    """A table's file could not be read; the message names the file."""


#: How a column with a Parquet bloom filter is marked in a file's columns.
BLOOM_MARK = " (bloom filter)"


def parquet_columns(path: Path, meta_prefix: str = "") -> tuple[str, ...]:
    """`name type` of every data column in a Parquet file's footer (those named with the
    format's `meta_prefix` left out), marked `BLOOM_MARK` where the file holds a bloom filter
    for it (for any of its fields, in a nested column)."""
    try:
        with pq.ParquetFile(path) as footer:
            schema, metadata = footer.schema_arrow, footer.metadata
    except (OSError, pa.ArrowInvalid) as exc:
        raise TableFileError(f"{path}: cannot read its Parquet footer: {exc}") from None
    bloomed = {
        chunk.path_in_schema.split(".")[0]
        for group in range(metadata.num_row_groups)
        for index in range(metadata.num_columns)
        if (chunk := metadata.row_group(group).column(index)).bloom_filter_offset is not None
    }
    return tuple(
        f"{f.name} {arrow_type_name(f.type)}{BLOOM_MARK if f.name in bloomed else ''}"
        for f in schema
        if not (meta_prefix and f.name.startswith(meta_prefix))
    )


_ARROW_NAMES = {
    pa.bool_(): "boolean",
    pa.int32(): "int",
    pa.int64(): "long",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.string(): "string",
    pa.large_string(): "string",
    pa.date32(): "date",
    pa.binary(): "binary",
    pa.large_binary(): "binary",
}


def arrow_type_name(dtype: pa.DataType) -> str:
    """A Parquet column's type in the scenario spelling (`long`, `struct<x:int>`, ...)."""
    if dtype in _ARROW_NAMES:
        return _ARROW_NAMES[dtype]
    if pa.types.is_decimal(dtype):
        return f"decimal({dtype.precision},{dtype.scale})"
    if pa.types.is_timestamp(dtype):
        return "timestamp" if dtype.tz else "timestamp_ntz"
    if pa.types.is_struct(dtype):
        fields = ",".join(f"{f.name}:{arrow_type_name(f.type)}" for f in dtype)
        return f"struct<{fields}>"
    if pa.types.is_map(dtype):
        return f"map<{arrow_type_name(dtype.key_type)},{arrow_type_name(dtype.item_type)}>"
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return f"array<{arrow_type_name(dtype.value_type)}>"
    return str(dtype)


def local_path(uri: str) -> Path:
    """A local path from a `file:` URI or a plain path."""
    return Path(re.sub(r"^file:(//)?", "", uri))


def relative_path(path: Path, table_path: Path) -> str:
    """`path` below the table's folder, else as it is."""
    try:
        return path.relative_to(table_path).as_posix()
    except ValueError:
        return str(path)
