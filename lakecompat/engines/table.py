"""A written table as readers know it, and the query types each table format and type has."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from lakecompat.engines.errors import QueryError
from lakecompat.engines.formats import FORMATS, format_named

QUERY_TYPES = (
    "snapshot",
    "read_optimized",
    "incremental",
    "time_travel",
    "time_travel_timestamp",
    "changelog",
)

#: The columns a changelog read adds to each row: what happened to it (INSERT or DELETE) and
#: the position of the snapshot that did it among the snapshots read (0 for the first).
CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"


#: The query types of each table format, per table type (`engines.formats`).
FORMAT_QUERY_TYPES = {name: dict(f.query_types) for name, f in FORMATS.items()}


def table_query_types(format_name: str, table_type: str) -> tuple[str, ...]:
    """The query types a table of format `format_name` and `table_type` is read with."""
    return format_named(format_name).query_types[table_type]


@dataclass(frozen=True)
class TableRef:
    """A table the writer produced, as a reader needs to know it."""

    name: str
    path: Path
    table_type: str
    key: str
    format: str = "hudi"
    #: (name, Spark SQL type) of every column in the table's latest schema, meta columns included.
    columns: tuple[tuple[str, str], ...] = ()
    #: The commit of the reference state (before the first schema change) as (requested time,
    #: completion time): incremental queries start after it, time travel reads as of it.
    #: Iceberg: (the snapshot's sequence number, its snapshot id).
    reference_instant: tuple[str, str] | None = None
    #: A moment at which the table was in its reference state (UTC, `YYYY-MM-DD
    #: HH:MM:SS.fff`): time travel by timestamp reads as of it. Iceberg: halfway between the
    #: reference snapshot's commit and the next one's, as a user picks a time between commits.
    reference_time: str | None = None
    #: The states (0 = seed rows, i = after steps[i-1]) after the reference whose commit only
    #: appended data files (Iceberg's `append` snapshots): what an incremental read of a
    #: format that reads appends returns. None: the format's incremental query returns every
    #: row written after the reference (Hudi).
    appended: tuple[int, ...] | None = None
    #: The states after the reference whose step committed a snapshot (Iceberg), in order:
    #: what a changelog read returns the changes of, the first with ordinal 0. None: the
    #: format has no changelog read.
    committed: tuple[int, ...] | None = None
    #: Partition columns, and the partition folders below `path` (`region=eu`, ...).
    partition_by: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()


def iceberg_metadata(table: Path) -> Path:
    """An Iceberg table's current metadata file, as Iceberg's Hadoop catalog names it: the
    version in `metadata/version-hint.text`; QueryError when the table has none."""
    hint = table / "metadata" / "version-hint.text"
    try:
        version = hint.read_text().strip()
    except OSError as exc:
        raise QueryError(f"no Iceberg metadata found: cannot read {hint}: {exc}") from None
    return table / "metadata" / f"v{version}.metadata.json"


def current_snapshot_id(table: Path) -> str:
    """The id of an Iceberg table's current snapshot (the end of a changelog read), from its
    metadata; QueryError when it has none."""
    metadata = iceberg_metadata(table)
    try:
        current = json.loads(metadata.read_text()).get("current-snapshot-id")
    except (OSError, ValueError) as exc:
        raise QueryError(f"cannot read {metadata}: {exc}") from None
    if current is None or current == -1:
        raise QueryError(f"{metadata} has no current snapshot")
    return str(current)


def query_types_except(format_name: str, *left_out: str) -> dict[str, tuple[str, ...]]:
    """The query types of format `format_name` per table type, without `left_out` (what an
    engine lacks)."""
    return {
        table_type: tuple(q for q in types if q not in left_out)
        for table_type, types in format_named(format_name).query_types.items()
    }


def reference_time(table: TableRef) -> str:
    """The moment time travel by timestamp reads the table as of (UTC, `reference_time`)."""
    if table.reference_time is None:
        raise QueryError(f"no commit time of the reference snapshot found in {table.path}")
    return table.reference_time


def reference_time_ms(table: TableRef) -> int:
    """`reference_time` as milliseconds since the epoch."""
    moment = dt.datetime.fromisoformat(reference_time(table)).replace(tzinfo=dt.UTC)
    return round(moment.timestamp() * 1000)


def reference_instant(table: TableRef) -> tuple[str, str]:
    """(requested, completed) time of the table's reference commit.

    Incremental and time-travel queries cannot run without it. Hudi 1.x reads incremental
    ranges by completion time and time travel by requested (instant) time.
    """
    if table.reference_instant is None:
        where = table.path / format_named(table.format).metadata_folder
        raise QueryError(f"no completed commit found in {where}")
    return table.reference_instant
