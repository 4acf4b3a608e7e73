"""What a Hudi table's live files really hold: each file's commit instant and column schema.

The list of live file slices comes from Hudi itself (the `show_fsview_latest` procedure, run
by the writer's Spark); the schemas are read from the files: a base file's Parquet footer, a
log file's block headers (each data block carries its writer schema in Avro JSON). Nothing is
assumed from the scenario: a cell's evidence says what the engines really read.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

from lakecompat.harness.writer import table_files
from lakecompat.harness.writer.base import DataFile
from lakecompat.harness.writer.table_files import (
    BLOOM_MARK,
    TableFileError,
    local_path,
    relative_path,
)

__all__ = ["BLOOM_MARK"]

#: Columns Hudi adds to every record; they are not part of a scenario's schema.
META_PREFIX = "_hoodie_"
_MAGIC = b"#HUDI#"
#: Log block types by their ordinal in Hudi's `HoodieLogBlockType`.
_BLOCK_TYPES = ("command", "delete", "corrupt", "avro_data", "hfile_data", "parquet_data", "cdc")
_DATA_BLOCKS = {"avro_data", "hfile_data", "parquet_data"}
#: Header keys by their ordinal in Hudi's `HeaderMetadataType`.
_INSTANT_TIME, _SCHEMA = 0, 2
#: A base file: `<file id>_<write token>_<instant>.<extension>`.
_BASE_NAME = re.compile(r"^(?P<file_id>.+)_[^_]+_(?P<instant>\d+)\.[a-z]+$")
#: A log file in the procedure's listing: `HoodieLogFile(pathStr=file:/..., fileSize=N)` (Hudi
#: 1.x) or `HoodieLogFile{pathStr='file:/...', fileLen=N}` (0.x).
_LOG_PATH = re.compile(r"pathStr='?([^',)]+)")


class HudiFileError(TableFileError):
    """A table file could not be read as Hudi writes it; the message names the file."""


def live_files(slices: list[dict[str, Any]], table_path: Path) -> list[DataFile]:
    """Every base file and log data block of the live file slices, with its schema.

    `slices` are the rows of Hudi's `show_fsview_latest` procedure (`partition`, `file_id`,
    `data_file` and the two `delta_files_*` columns listing the log files).
    """
    found: list[DataFile] = []
    for row in slices:
        group = f"{row['partition']}/{row['file_id']}" if row["partition"] else row["file_id"]
        if row.get("data_file"):
            path = local_path(row["data_file"])
            match = _BASE_NAME.match(path.name)
            if not match:
                raise HudiFileError(f"{path}: not a Hudi base file name")
            columns = parquet_columns(path)
            found.append(
                DataFile(relative_path(path, table_path), "base", group, match["instant"], columns)
            )
        logs = " ".join(str(row.get(key) or "") for key in row if key.startswith("delta_files"))
        for log_path in sorted({local_path(p) for p in _LOG_PATH.findall(logs)}):
            for instant, columns in log_blocks(log_path):
                found.append(
                    DataFile(relative_path(log_path, table_path), "log", group, instant, columns)
                )
    return found


def parquet_columns(path: Path) -> tuple[str, ...]:
    """A base file's data columns (`table_files.parquet_columns`), Hudi's meta columns left
    out."""
    return table_files.parquet_columns(path, META_PREFIX)


def log_blocks(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(instant, columns) of every data or delete block of a Hudi log file, in file order.

    A block is `#HUDI#`, its length (8 bytes, not counting the magic), the format version and
    block type (4 bytes each), then the header: a count, and per entry a key ordinal, a length
    and UTF-8 bytes (big-endian, as Java's DataOutputStream writes them).
    """
    data = path.read_bytes()
    blocks: list[tuple[str, tuple[str, ...]]] = []
    offset = 0
    while offset < len(data):
        if data[offset : offset + 6] != _MAGIC:
            raise HudiFileError(f"{path}: no Hudi log block at byte {offset}")
        try:
            (length,) = struct.unpack_from(">q", data, offset + 6)
            _version, ordinal, count = struct.unpack_from(">iii", data, offset + 14)
            header, cursor = {}, offset + 26
            for _ in range(count):
                key, size = struct.unpack_from(">ii", data, cursor)
                header[key] = data[cursor + 8 : cursor + 8 + size].decode()
                cursor += 8 + size
        except (struct.error, UnicodeDecodeError) as exc:
            raise HudiFileError(f"{path}: damaged log block at byte {offset}: {exc}") from None
        kind = _BLOCK_TYPES[ordinal] if ordinal < len(_BLOCK_TYPES) else str(ordinal)
        if kind in _DATA_BLOCKS:
            try:
                columns = avro_columns(header.get(_SCHEMA, ""))
            except HudiFileError as exc:
                raise HudiFileError(f"{path}: block at byte {offset}: {exc}") from None
            blocks.append((header.get(_INSTANT_TIME, ""), columns))
        elif kind == "delete":
            blocks.append((header.get(_INSTANT_TIME, ""), ()))
        offset += 14 + length
    return blocks


def avro_columns(schema_json: str) -> tuple[str, ...]:
    """`name type` of every data field of an Avro record schema (a log block's header)."""
    try:
        record = json.loads(schema_json)
    except json.JSONDecodeError as exc:
        raise HudiFileError(f"a log block's schema is not JSON: {exc}") from None
    return tuple(
        f"{f['name']} {avro_type_name(f['type'])}"
        for f in record.get("fields", [])
        if not f["name"].startswith(META_PREFIX)
    )


_AVRO_NAMES = {"boolean": "boolean", "int": "int", "long": "long", "float": "float"}
_AVRO_NAMES |= {"double": "double", "string": "string", "bytes": "binary"}
_AVRO_LOGICAL = {
    "date": "date",
    "timestamp-micros": "timestamp",
    "timestamp-millis": "timestamp",
    "local-timestamp-micros": "timestamp_ntz",
    "local-timestamp-millis": "timestamp_ntz",
}


def avro_type_name(avro: Any) -> str:
    """An Avro field type in the scenario spelling; a nullable union counts as its type."""
    if isinstance(avro, list):
        present = [t for t in avro if t != "null"]
        return avro_type_name(present[0]) if len(present) == 1 else str(avro)
    if isinstance(avro, str):
        return _AVRO_NAMES.get(avro, avro)
    logical = avro.get("logicalType")
    if logical == "decimal":
        return f"decimal({avro['precision']},{avro.get('scale', 0)})"
    if logical in _AVRO_LOGICAL:
        return _AVRO_LOGICAL[logical]
    kind = avro.get("type")
    if kind == "record":
        fields = ",".join(f"{f['name']}:{avro_type_name(f['type'])}" for f in avro["fields"])
        return f"struct<{fields}>"
    if kind == "array":
        return f"array<{avro_type_name(avro['items'])}>"
    if kind == "map":
        return f"map<string,{avro_type_name(avro['values'])}>"
    return avro_type_name(kind)
