"""hudi-rs as a reader: the Python binding of Hudi's native Rust implementation (PyPI `hudi`).

It reads a table from its location, with no catalog and no service: `HudiTableBuilder` opens
the table, `read()` returns Arrow record batches. It has snapshot reads (merging log files
into base files for merge-on-read tables), the read-optimized mode, incremental reads and time
travel, each chosen through `HudiReadOptions`. Variant settings are Hudi options given to the
table builder (`--set hudi-rs:hoodie.read.…=…`); the variants choose its file-group reader
(version 2, the default, or version 1), which merges each file slice.
"""

from __future__ import annotations

import datetime as dt
import re

from lakecompat.engines.base import Variant
from lakecompat.engines.errors import QueryError
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.library.reader import LibraryReader
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import COUNT_COLUMN, Shape
from lakecompat.engines.table import TableRef, reference_instant

_READER_VERSION = "hoodie.read.file.group.reader.version"
_OPEN = """\
import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

table = HudiTableBuilder.from_base_uri({path!r}).with_hudi_options(settings).build()
"""
_READ = """\
batches = table.read(options)
if batches:
    answer = pa.Table.from_batches(batches)
else:
    answer = table.get_schema_with_meta_fields().empty_table()
"""
#: A count, as a user of hudi-rs counts: the rows the read returned.
_COUNT = f"answer = pa.table({{{COUNT_COLUMN!r}: pa.array([answer.num_rows], pa.int64())}})\n"
_FILTER_OPERATORS = "= != < <= > >= IN NOT IN"
#: hudi-rs reads Hudi tables only; the control check reads the plain Parquet table with the
#: Arrow reader that hudi-rs's answers come in, in the same worker (which imported hudi-rs).
_PARQUET = """\
import pyarrow.parquet as pq

answer = pq.read_table({path!r})
"""
_OPTIONS = {
    "snapshot": "HudiReadOptions().with_query_type(HudiQueryType.Snapshot)",
    "read_optimized": (
        "HudiReadOptions().with_query_type(HudiQueryType.Snapshot)"
        '.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")'
    ),
    "incremental": (
        "HudiReadOptions().with_query_type(HudiQueryType.Incremental)"
        ".with_start_timestamp({completed!r})"
    ),
    "time_travel": (
        "HudiReadOptions().with_query_type(HudiQueryType.Snapshot)"
        ".with_as_of_timestamp({requested!r})"
    ),
}


def _text(value: object) -> str:
    """A filter value as hudi-rs takes it: text, which it casts to the column's type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return repr(value) if isinstance(value, float) else str(value)


class HudiRsEngine(LibraryReader):
    """hudi-rs, reading each table from its location."""

    name = "hudi-rs"
    trackers = ("apache/hudi-rs",)
    distribution = "hudi"
    default_release = "0.5.0"
    release_env = "LAKECOMPAT_HUDI_RS_VERSION"
    release_help = "the hudi-rs release (PyPI hudi)"
    imports = ("hudi",)
    settings_help = (
        "hudi-rs: hoodie.* options for its table builder, unchecked (the library's keys are "
        "not known before it reads)"
    )
    # hudi-rs reads file slices concurrently, so which batch differed first varies.
    unstable_errors = (
        (
            re.compile(r"^ArrowInvalid: Schema at index \d+ was different"),
            "ArrowInvalid: the record batches hudi-rs returned have different schemas "
            "(pa.Table.from_batches refuses them)",
        ),
    )
    readings = (
        reading(
            "hudi",
            query_types=HUDI.query_types,  # every query type of the format
            # hudi-rs has two file-group readers, which merge a file slice (and its log files).
            variants=(
                Variant("file_group_reader_v2", {_READER_VERSION: "2"}),
                Variant("file_group_reader_v1", {_READER_VERSION: "1"}),
            ),
        ),
    )

    @classmethod
    def shape_unsupported(cls, shape: Shape) -> str | None:
        if shape.predicate is not None and shape.predicate.op == "is null":
            return f"hudi-rs's read filters have no IS NULL (its operators: {_FILTER_OPERATORS})"
        if shape.predicate is not None and shape.predicate.nested:
            return (
                "hudi-rs's read filters name top-level columns only, not a field inside a struct "
                f"({shape.predicate.column})"
            )
        return None

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code; a shape's predicate and columns go to hudi-rs's read options
        (`with_filters`, `with_projection`), where it prunes files by their statistics."""
        path = self.path_of(table)
        if table.format == "parquet":
            return _PARQUET.format(path=path)
        options = _OPTIONS[query_type]
        if query_type in ("incremental", "time_travel"):
            # Like Hudi 1.x: incremental ranges by completion time, time travel by instant time.
            requested, completed = reference_instant(table)
            options = options.format(requested=requested, completed=completed)
        reason = self.shape_unsupported(shape)
        if reason is not None:
            raise QueryError(reason)
        predicate = shape.predicate
        if predicate is not None:
            if predicate.op == "=":
                filters = [(predicate.column, "=", _text(predicate.values[0]))]
            else:
                low, high = (_text(v) for v in predicate.values)
                filters = [(predicate.column, ">=", low), (predicate.column, "<=", high)]
            options += f".with_filters({filters!r})"
        if shape.columns:
            options += f".with_projection({list(shape.columns)!r})"
        code = _OPEN.format(path=path) + f"options = {options}\n" + _READ
        return code + _COUNT if shape.counts else code
