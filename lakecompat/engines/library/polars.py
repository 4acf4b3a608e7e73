"""Polars as a reader: `polars.scan_iceberg` (PyPI `polars`, with `polars-iceberg`, Polars' own
planner of Iceberg scans, and PyIceberg, which it needs to open a table).

It reads a table from its current metadata file, with no catalog and no service: a lazy scan that
Polars plans and reads itself. Time travel is the scan of the reference snapshot (`snapshot_id=`),
the incremental read the scan of the snapshots after it (`from_snapshot_id_exclusive=`); it has no
time travel by timestamp. A shape's filter and columns are Polars expressions on the lazy scan
(`filter`, `select`), which Polars pushes into it. Polars reads with no settings of its own, so it
has one variant. It has no reader of Hudi tables.
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
    extra_packages = ("polars-iceberg==0.1.0", "pyiceberg==0.12.0", "pyarrow")
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
    )

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code: the lazy scan of the current snapshot (time travel: of the reference
        snapshot), a shape's filter and columns as expressions on it."""
        if table.format == "parquet":
            return _PARQUET.format(path=f"{self.path_of(table)}/*.parquet")
        imports = ["import polars as pl"]
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
            if any(isinstance(v, dt.date) for v in predicate.values):
                imports.insert(0, "import datetime")
        if shape.columns:
            lines.append(f"scan = scan.select({', '.join(map(repr, shape.columns))})")
        if shape.counts:
            lines.append(f"scan = scan.select(pl.len().cast(pl.Int64).alias({COUNT_COLUMN!r}))")
        lines.append("answer = scan.collect().to_arrow()")
        return "\n".join(imports) + "\n\n" + "\n".join(lines) + "\n"
