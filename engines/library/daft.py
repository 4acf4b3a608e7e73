"""Daft as a reader: `daft.read_hudi`, Daft's own reader of Hudi tables (PyPI `daft`).

It reads a table from its location, with no catalog: a snapshot of a copy-on-write table. Its
Hudi reader (`daft/io/hudi/pyhudi`, pure Python) refuses merge-on-read tables ("Only support
COPY_ON_WRITE table") and tables of other versions than 5 and 6 ("Only support table version
5 and 6", that is Hudi 0.12 to 0.15); it has no incremental query and no time travel. Daft
reads with no settings of its own, so it has one variant.
"""

from __future__ import annotations

from typing import ClassVar

from engines.library.reader import LibraryReader
from engines.shape import ALL, COUNT_COLUMN, Shape
from engines.table import TableRef

_READ = "import daft\n\nanswer = {call}.to_arrow()\n"
#: What a shaped read's literals need (decimals and dates are written as Python values).
_SHAPED_IMPORTS = (
    "import datetime\nfrom decimal import Decimal\n\nimport daft\nimport pyarrow as pa\n"
)
_COW_ONLY = "Daft's Hudi reader reads copy-on-write tables only"


class DaftEngine(LibraryReader):
    """Daft, reading each table from its location."""

    name = "daft"
    display_name = "Daft"
    distribution = "daft"
    default_version = "0.7.26"
    version_variable = "LAKECOMPAT_DAFT_VERSION"
    # Daft's `hudi` extra names no package, but its Hudi reader imports sortedcontainers.
    extra_packages = ("sortedcontainers",)
    imports = ("daft", "daft.io.hudi.pyhudi.table")
    takes_settings = False
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {"cow": ("snapshot",)}
    probe_only: ClassVar[dict[tuple[str, str], str]] = {
        ("mor", "snapshot"): _COW_ONLY,
        ("mor", "read_optimized"): _COW_ONLY,
    }
    unsupported: ClassVar[dict[str, str]] = {
        "incremental": "Daft's read_hudi has no incremental query",
        "time_travel": "Daft's read_hudi has no time travel",
    }

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code; a shape's predicate and columns are Daft expressions (`where`,
        `select`), which Daft pushes into its scan."""
        path = self.path_of(table)
        if table.format == "parquet":
            return _READ.format(call=f"daft.read_parquet({path + '/*.parquet'!r})")
        if shape == ALL:
            return _READ.format(call=f"daft.read_hudi({path!r})")
        lines = [_SHAPED_IMPORTS, f"df = daft.read_hudi({path!r})"]
        predicate = shape.predicate
        if predicate is not None:
            name, *fields = predicate.path
            column = f"daft.col({name!r})" + "".join(f"[{f!r}]" for f in fields)
            if predicate.op == "is null":
                lines.append(f"df = df.where({column}.is_null())")
            elif predicate.op == "=":
                lines.append(f"df = df.where({column} == {predicate.values[0]!r})")
            else:
                low, high = predicate.values
                lines.append(f"df = df.where({column}.between({low!r}, {high!r}))")
        if shape.columns:
            lines.append(f"df = df.select({', '.join(map(repr, shape.columns))})")
        if shape.counts:
            count = "pa.array([df.count_rows()], pa.int64())"
            lines.append(f"answer = pa.table({{{COUNT_COLUMN!r}: {count}}})")
        else:
            lines.append("answer = df.to_arrow()")
        return "\n".join(lines) + "\n"
