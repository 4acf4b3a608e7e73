"""A written table as readers know it, and the query types each table format and type has."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from engines.errors import QueryError

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


#: The query types Hudi defines per table type (copy-on-write has no separate read-optimized
#: view); every engine gets a cell for each, UNSUPPORTED where it lacks one.
TABLE_QUERY_TYPES = {
    "cow": ("snapshot", "incremental", "time_travel"),
    "mor": ("snapshot", "read_optimized", "incremental", "time_travel"),
}

#: The query types of Iceberg tables. Iceberg has no read-optimized view (a merge-on-read
#: table's delete files always apply). Its incremental read is an append scan (Spark's
#: `start-snapshot-id`, PyIceberg's `incremental_append_scan`): the rows the `append`
#: snapshots after the reference added, as they were written, not Hudi's "every row written
#: since". Time travel goes to a snapshot by its id (`time_travel`) or by a time
#: (`time_travel_timestamp`: the table as it was at a moment after the reference commit).
#: A changelog read (Spark's `create_changelog_view`, Trino's `table_changes`) returns each
#: row every snapshot after the reference inserted or deleted, an update as both.
ICEBERG_QUERY_TYPES = (
    "snapshot",
    "incremental",
    "time_travel",
    "time_travel_timestamp",
    "changelog",
)

#: The query types of each table format, per table type.
FORMAT_QUERY_TYPES = {
    "hudi": TABLE_QUERY_TYPES,
    "iceberg": {"cow": ICEBERG_QUERY_TYPES, "mor": ICEBERG_QUERY_TYPES},
}


def table_query_types(table_format: str, table_type: str) -> tuple[str, ...]:
    """The query types a table of `table_format` and `table_type` is read with."""
    return FORMAT_QUERY_TYPES[table_format][table_type]


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


def query_types_except(table_format: str, *left_out: str) -> dict[str, tuple[str, ...]]:
    """The query types of `table_format` per table type, without `left_out` (what an engine
    lacks)."""
    return {
        table_type: tuple(q for q in types if q not in left_out)
        for table_type, types in FORMAT_QUERY_TYPES[table_format].items()
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
        where = table.path / (".hoodie" if table.format == "hudi" else "metadata")
        raise QueryError(f"no completed commit found in {where}")
    return table.reference_instant
