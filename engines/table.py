"""A written table as readers know it, and the query types each table format and type has."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engines.errors import QueryError

QUERY_TYPES = ("snapshot", "read_optimized", "incremental", "time_travel")


#: The query types Hudi defines per table type (copy-on-write has no separate read-optimized
#: view); every engine gets a cell for each, UNSUPPORTED where it lacks one.
TABLE_QUERY_TYPES = {
    "cow": ("snapshot", "incremental", "time_travel"),
    "mor": QUERY_TYPES,
}

#: The query types of each table format, per table type. Iceberg has no read-optimized view
#: (a merge-on-read table's delete files always apply). Its incremental read (Spark's
#: `start-snapshot-id`, PyIceberg's append scans) returns only rows of append snapshots,
#: which is another question than Hudi's incremental query; lakecompat does not ask it yet.
FORMAT_QUERY_TYPES = {
    "hudi": TABLE_QUERY_TYPES,
    "iceberg": {"cow": ("snapshot", "time_travel"), "mor": ("snapshot", "time_travel")},
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


def reference_instant(table: TableRef) -> tuple[str, str]:
    """(requested, completed) time of the table's reference commit.

    Incremental and time-travel queries cannot run without it. Hudi 1.x reads incremental
    ranges by completion time and time travel by requested (instant) time.
    """
    if table.reference_instant is None:
        where = table.path / (".hoodie" if table.format == "hudi" else "metadata")
        raise QueryError(f"no completed commit found in {where}")
    return table.reference_instant
