"""Polars as a reader: `polars.scan_iceberg` (PyPI `polars`, with `polars-iceberg`, Polars' own
planner of Iceberg scans, and PyIceberg, which it needs to open a table) and `polars.scan_delta`
(with `deltalake`, which reads a Delta table's log for it).

It reads an Iceberg table from its current metadata file, a Delta table from its location, with no
catalog and no service: a lazy scan that Polars plans and reads itself. Iceberg's time travel is
the scan of the reference snapshot (`snapshot_id=`), the incremental read the scan of the snapshots
after it (`from_snapshot_id_exclusive=`); it has no time travel by timestamp. Delta's time travel
is the scan at the reference version or at a moment (`version=`, a number or a datetime); it has no
change data feed. A shape's filter and columns are Polars expressions on the lazy scan (`filter`,
`select`), which Polars pushes into it. Polars reads with no settings of its own, so it has one
variant. It has no reader of Hudi tables.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from lakecompat.engines.library.reader import LibraryReader, filter_expression
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import COUNT_COLUMN, Shape
from lakecompat.engines.table import (
    TableRef,
    iceberg_metadata,
    query_types_except,
    reference_instant,
    reference_time,
)

#: The control check reads the plain Parquet table with Polars' Parquet reader.
_PARQUET = "import polars as pl\n\nanswer = pl.read_parquet({path!r}).to_arrow()\n"


class PolarsEngine(LibraryReader):
    """Polars, scanning each table from its metadata file."""

    name = "polars"
    display_name = "Polars"
    trackers = ("pola-rs/polars",)
    distribution = "polars"
    default_release = "2.1.0"
    release_env = "LAKECOMPAT_POLARS_VERSION"
    release_help = "the Polars release (PyPI polars)"
    extra_packages = ("polars-iceberg==0.1.0", "pyiceberg==0.12.0", "deltalake==1.6.6", "pyarrow")
    imports = ("polars", "pyarrow")
    takes_settings = False
    readings = (
        reading(
            "iceberg",
            query_types=query_types_except("iceberg", "time_travel_timestamp", "changelog"),
            unsupported={
                "time_travel_timestamp": (
                    "Polars' scan_iceberg chooses a snapshot by its id only (`snapshot_id=`), "
                    "not by a time"
                ),
                "changelog": (
                    "Polars' scan_iceberg has no changelog read: between two snapshots it reads "
                    "the appended rows only"
                ),
            },
        ),
        reading(
            "delta",
            query_types=query_types_except("delta", "changelog"),
            unsupported={
                "changelog": "Polars' scan_delta reads one version of a table: it has no read of "
                "the change data feed"
            },
        ),
    )

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code: the lazy scan of the current snapshot (time travel: of the reference
        snapshot), a shape's filter and columns as expressions on it."""
        if table.format == "parquet":
            return _PARQUET.format(path=f"{self.path_of(table)}/*.parquet")
        imports = ["import polars as pl"]
        if table.format == "delta":
            lines = [_scan_delta(table, query_type, imports)]
        else:
            arguments = [repr(str(iceberg_metadata(table.path)))]
            if query_type == "time_travel":
                arguments.append(f"snapshot_id={int(reference_instant(table)[1])}")
            elif query_type == "incremental":
                reference = int(reference_instant(table)[1])
                arguments.append(f"from_snapshot_id_exclusive={reference}")
            lines = [f"scan = pl.scan_iceberg({', '.join(arguments)})"]
        predicate = shape.predicate
        if predicate is not None:
            name, *fields = predicate.path
            column = f"pl.col({name!r})" + "".join(f".struct.field({f!r})" for f in fields)
            expression = filter_expression(predicate, column, "is_between")
            lines.append(f"scan = scan.filter({expression})")
            if any(isinstance(v, Decimal) for v in predicate.values):
                imports.insert(0, "from decimal import Decimal")
            if any(isinstance(v, dt.date) for v in predicate.values) and (
                "import datetime" not in imports
            ):
                imports.insert(0, "import datetime")
        if shape.columns:
            lines.append(f"scan = scan.select({', '.join(map(repr, shape.columns))})")
        if shape.counts:
            lines.append(f"scan = scan.select(pl.len().cast(pl.Int64).alias({COUNT_COLUMN!r}))")
        lines.append("answer = scan.collect().to_arrow()")
        return "\n".join(imports) + "\n\n" + "\n".join(lines) + "\n"


def _scan_delta(table: TableRef, query_type: str, imports: list[str]) -> str:
    """The lazy scan of a Delta table from its location: at the reference version (time
    travel), or at a moment after its commit (by timestamp)."""
    arguments = [repr(str(table.path))]
    if query_type == "time_travel":
        arguments.append(f"version={int(reference_instant(table)[1])}")
    elif query_type == "time_travel_timestamp":
        moment = dt.datetime.fromisoformat(reference_time(table)).replace(tzinfo=dt.UTC)
        arguments.append(f"version={moment!r}")
        imports.insert(0, "import datetime")
    return f"scan = pl.scan_delta({', '.join(arguments)})"
