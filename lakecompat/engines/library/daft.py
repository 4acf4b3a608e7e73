"""Daft as a reader: `daft.read_hudi`, `daft.read_iceberg` and `daft.read_deltalake`, Daft's own
readers of Hudi, Iceberg and Delta tables (PyPI `daft`; PyIceberg opens an Iceberg table for it,
deltalake a Delta table's log).

It reads a table with no catalog: a Hudi table from its location, an Iceberg table from its
current metadata file. Its Hudi reader (`daft/io/hudi/pyhudi`, pure Python) reads a snapshot of
a copy-on-write table: it refuses merge-on-read tables ("Only support COPY_ON_WRITE table") and
tables of other versions than 5 and 6 ("Only support table version 5 and 6", that is Hudi 0.12
to 0.15); it has no incremental query and no time travel. Its Iceberg reader plans with
PyIceberg and reads the files itself; time travel is `snapshot_id=`. Its Delta reader plans
with deltalake and reads the files itself; time travel is `version=` (a number or a moment); it
has no read of the change data feed. Daft reads with no settings of its own, so it has one
variant.
"""

from __future__ import annotations

import datetime as dt
import re

from lakecompat.engines.library.reader import LibraryReader, filter_expression
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import ALL, COUNT_COLUMN, Shape
from lakecompat.engines.table import (
    TableRef,
    iceberg_metadata,
    query_types_except,
    reference_instant,
    reference_time,
)

_READ = "{imports}import daft\n\nanswer = {call}.to_arrow()\n"
#: What a shaped read's literals need (decimals and dates are written as Python values).
_SHAPED_IMPORTS = (
    "import datetime\nfrom decimal import Decimal\n\nimport daft\nimport pyarrow as pa\n"
)
_COW_ONLY = "Daft's Hudi reader reads copy-on-write tables only"


def _read_hudi(table: TableRef, query_type: str, path: str) -> str:
    """Daft's read of a Hudi table: from its location (a snapshot of copy-on-write tables)."""
    return f"daft.read_hudi({path!r})"


def _read_iceberg(table: TableRef, query_type: str, path: str) -> str:
    """Daft's read of an Iceberg table: from its current metadata file (time travel: the
    reference snapshot's id)."""
    arguments = [repr(str(iceberg_metadata(table.path)))]
    if query_type == "time_travel":
        arguments.append(f"snapshot_id={int(reference_instant(table)[1])}")
    return f"daft.read_iceberg({', '.join(arguments)})"


def _read_delta(table: TableRef, query_type: str, path: str) -> str:
    """Daft's read of a Delta table: from its location, at the reference version or a moment
    after its commit (time travel)."""
    arguments = [repr(path)]
    if query_type == "time_travel":
        arguments.append(f"version={int(reference_instant(table)[1])}")
    elif query_type == "time_travel_timestamp":
        moment = dt.datetime.fromisoformat(reference_time(table)).replace(tzinfo=dt.UTC)
        arguments.append(f"version={moment!r}")
    return f"daft.read_deltalake({', '.join(arguments)})"


class DaftEngine(LibraryReader):
    """Daft, reading each table from its location."""

    name = "daft"
    display_name = "Daft"
    trackers = ("Eventual-Inc/Daft",)
    distribution = "daft"
    default_release = "0.7.26"
    release_env = "LAKECOMPAT_DAFT_VERSION"
    release_help = "the Daft release (PyPI daft)"
    # Daft's `hudi` extra names no package, but its Hudi reader imports sortedcontainers.
    # Its `iceberg` extra is PyIceberg, which opens an Iceberg table's metadata for it.
    extra_packages = ("sortedcontainers", "pyiceberg==0.12.0", "deltalake==1.6.6")
    imports = ("daft", "daft.io.hudi.pyhudi.table")
    takes_settings = False
    readings = (
        reading(
            "hudi",
            read_call=staticmethod(_read_hudi),
            query_types={"cow": ("snapshot",)},
            probe_only={("mor", "snapshot"): _COW_ONLY, ("mor", "read_optimized"): _COW_ONLY},
            unsupported={
                "incremental": "Daft's read_hudi has no incremental query",
                "time_travel": "Daft's read_hudi has no time travel",
            },
        ),
        reading(
            "iceberg",
            read_call=staticmethod(_read_iceberg),
            query_types=query_types_except(
                "iceberg", "incremental", "time_travel_timestamp", "changelog"
            ),
            unsupported={
                "incremental": "Daft's read_iceberg reads one snapshot: it has no incremental read",
                "changelog": "Daft's read_iceberg reads one snapshot: it has no changelog read",
                "time_travel_timestamp": (
                    "Daft's read_iceberg chooses a snapshot by its id only (`snapshot_id=`), not "
                    "by a time"
                ),
            },
        ),
        reading(
            "delta",
            read_call=staticmethod(_read_delta),
            query_types=query_types_except("delta", "changelog"),
            unsupported={
                "changelog": "Daft's read_deltalake reads one version of a table: it has no read "
                "of the change data feed",
            },
        ),
    )
    # Which data file fails first, and how, depends on which of Daft's parallel reads of a
    # table's files gets there first.
    unstable_errors = (
        (
            re.compile(r"^DaftCoreException: DaftError::CorruptFile Failed to decode parquet"),
            "DaftCoreException: DaftError::CorruptFile Failed to decode a parquet column of one "
            "of the table's data files",
        ),
        (
            re.compile(
                r"^DaftCoreException: DaftError::CorruptFile Arrow error for \S+: "
                r"Parquet argument error: Arrow: Child of map field must have two"
            ),
            "DaftCoreException: DaftError::CorruptFile Arrow error for one of the table's data "
            "files: Parquet argument error: Arrow: Child of map field must have two children",
        ),
    )

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code; a shape's predicate and columns are Daft expressions (`where`,
        `select`), which Daft pushes into its scan."""
        path = self.path_of(table)
        if table.format == "parquet":
            return _READ.format(imports="", call=f"daft.read_parquet({path + '/*.parquet'!r})")
        read = self.reading(table.format).read_call(table, query_type, path)
        if shape == ALL:
            imports = "import datetime\n\n" if "datetime." in read else ""
            return _READ.format(imports=imports, call=read)
        lines = [_SHAPED_IMPORTS, f"df = {read}"]
        predicate = shape.predicate
        if predicate is not None:
            name, *fields = predicate.path
            column = f"daft.col({name!r})" + "".join(f"[{f!r}]" for f in fields)
            lines.append(f"df = df.where({filter_expression(predicate, column, 'between')})")
        if shape.columns:
            lines.append(f"df = df.select({', '.join(map(repr, shape.columns))})")
        if shape.counts:
            count = "pa.array([df.count_rows()], pa.int64())"
            lines.append(f"answer = pa.table({{{COUNT_COLUMN!r}: {count}}})")
        else:
            lines.append("answer = df.to_arrow()")
        return "\n".join(lines) + "\n"
