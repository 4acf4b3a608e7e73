"""hudi-rs as a reader: the Python binding of Hudi's native Rust implementation (PyPI `hudi`).

It reads a table from its location, with no catalog and no service: `HudiTableBuilder` opens
the table, `read()` returns Arrow record batches. It has snapshot reads (merging log files
into base files for merge-on-read tables), the read-optimized mode, incremental reads and time
travel, each chosen through `HudiReadOptions`. Variant settings are Hudi options given to the
table builder (`--set hudi-rs:hoodie.read.…=…`); the variants choose its file-group reader
(version 2, the default, or version 1), which merges each file slice.
"""

from __future__ import annotations

import re
from typing import ClassVar

from engines.base import Variant
from engines.library.reader import LibraryReader
from engines.table import TableRef, reference_instant

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


class HudiRsEngine(LibraryReader):
    """hudi-rs, reading each table from its location."""

    name = "hudi-rs"
    distribution = "hudi"
    default_version = "0.5.0"
    version_variable = "LAKECOMPAT_HUDI_RS_VERSION"
    imports = ("hudi",)
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot", "incremental", "time_travel"),
        "mor": ("snapshot", "read_optimized", "incremental", "time_travel"),
    }
    # hudi-rs reads file slices concurrently, so which batch differed first varies.
    unstable_errors = (
        (
            re.compile(r"^ArrowInvalid: Schema at index \d+ was different"),
            "ArrowInvalid: the record batches hudi-rs returned have different schemas "
            "(pa.Table.from_batches refuses them)",
        ),
    )
    # hudi-rs has two file-group readers, which merge a file slice (and its log files).
    variants = (
        Variant("file_group_reader_v2", {_READER_VERSION: "2"}),
        Variant("file_group_reader_v1", {_READER_VERSION: "1"}),
    )

    def read_sql(self, table: TableRef, query_type: str) -> str:
        path = self.path_of(table)
        if table.format == "parquet":
            return _PARQUET.format(path=path)
        options = _OPTIONS[query_type]
        if query_type in ("incremental", "time_travel"):
            # Like Hudi 1.x: incremental ranges by completion time, time travel by instant time.
            requested, completed = reference_instant(table)
            options = options.format(requested=requested, completed=completed)
        return _OPEN.format(path=path) + f"options = {options}\n" + _READ
