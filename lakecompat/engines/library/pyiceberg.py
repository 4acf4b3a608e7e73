"""PyIceberg as a reader: Iceberg's own Python implementation (PyPI `pyiceberg`).

It reads a table from its current metadata file (`StaticTable.from_metadata`), with no catalog and
no service, and returns Arrow. Time travel is a scan of the reference snapshot
(`scan(snapshot_id=...)`), by timestamp of the snapshot `snapshot_as_of_timestamp` finds; the
incremental read is `incremental_append_scan` from the reference snapshot. A shape's filter and
columns go to the scan (`row_filter`, `selected_fields`), where PyIceberg prunes files by their
statistics. PyIceberg reads with no settings of its own, so it has one variant.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from lakecompat.engines.library.reader import LibraryReader
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import COUNT_COLUMN, Shape
from lakecompat.engines.table import (
    TableRef,
    iceberg_metadata,
    query_types_except,
    reference_instant,
    reference_time,
    reference_time_ms,
)

_OPEN = """\
{imports}from pyiceberg.table import StaticTable

table = StaticTable.from_metadata({metadata!r})
"""
#: The control check reads the plain Parquet table with the Arrow reader PyIceberg answers in.
_PARQUET = """\
import pyarrow.parquet as pq

answer = pq.read_table({path!r})
"""


class PyIcebergEngine(LibraryReader):
    """PyIceberg, reading each table from its metadata file."""

    name = "pyiceberg"
    display_name = "PyIceberg"
    trackers = ("apache/iceberg-python",)
    distribution = "pyiceberg"
    default_release = "0.12.0"
    release_env = "LAKECOMPAT_PYICEBERG_VERSION"
    release_help = "the PyIceberg release the pyiceberg reader reads with (PyPI pyiceberg)"
    extra_packages = ("pyarrow",)
    imports = ("pyiceberg.table", "pyarrow")
    takes_settings = False
    readings = (
        reading(
            "iceberg",
            query_types=query_types_except("iceberg", "changelog"),
            unsupported={
                "changelog": (
                    "PyIceberg has no changelog read: between two snapshots it reads the "
                    "appended rows only (incremental_append_scan)"
                )
            },
        ),
    )

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code: the scan of the current snapshot (time travel: of the reference
        snapshot), with a shape's filter and columns given to the scan."""
        if table.format == "parquet":
            return _PARQUET.format(path=self.path_of(table))
        arguments = []
        scan = "scan"
        if query_type == "time_travel":
            arguments.append(f"snapshot_id={int(reference_instant(table)[1])}")
        elif query_type == "time_travel_timestamp":
            arguments.append("snapshot_id=as_of.snapshot_id")
        elif query_type == "incremental":
            scan = "incremental_append_scan"
            arguments.append(f"from_snapshot_id_exclusive={int(reference_instant(table)[1])}")
        imports = ""
        predicate = shape.predicate
        if predicate is not None:
            name = predicate.column
            if predicate.op == "is null":
                expression, needed = f"IsNull({name!r})", "IsNull"
            elif predicate.op == "=":
                expression = f"EqualTo({name!r}, {predicate.values[0]!r})"
                needed = "EqualTo"
            else:
                low, high = (repr(v) for v in predicate.values)
                expression = (
                    f"And(GreaterThanOrEqual({name!r}, {low}), LessThanOrEqual({name!r}, {high}))"
                )
                needed = "And, GreaterThanOrEqual, LessThanOrEqual"
            imports = f"from pyiceberg.expressions import {needed}\n"
            if any(isinstance(v, dt.date) for v in predicate.values):
                imports = "import datetime\n" + imports
            if any(isinstance(v, Decimal) for v in predicate.values):
                imports = "from decimal import Decimal\n" + imports
            arguments.append(f"row_filter={expression}")
        if shape.columns:
            arguments.append(f"selected_fields={tuple(shape.columns)!r}")
        metadata = str(iceberg_metadata(table.path))
        code = _OPEN.format(imports=imports, metadata=metadata)
        if query_type == "time_travel_timestamp":
            moment, shown = reference_time_ms(table), reference_time(table)
            code += f"as_of = table.snapshot_as_of_timestamp({moment})  # {shown} UTC\n"
        code += f"answer = table.{scan}({', '.join(arguments)}).to_arrow()\n"
        if shape.counts:
            code = "import pyarrow as pa\n" + code
            count = "pa.array([answer.num_rows], pa.int64())"
            code += f"answer = pa.table({{{COUNT_COLUMN!r}: {count}}})\n"
        return code
