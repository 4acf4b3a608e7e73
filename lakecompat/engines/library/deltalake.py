"""delta-rs as a reader: the Python binding of Delta Lake's native Rust implementation (PyPI
`deltalake`).

It reads a table from its location, with no catalog and no service: `DeltaTable` opens the
table's log (at a version: `version=`; at a moment: `load_as_version(datetime)`), and answers
through one of two read paths, its variants: the PyArrow dataset (`to_pyarrow_dataset()`, the
path most code uses, PyArrow reading the data files) and its DataFusion query engine
(`QueryBuilder`, SQL over the registered table). The two differ in the table features they
read (docs/research/delta.md). The changelog read is the change data feed (`load_cdf`) from the
version after the reference. A shape's filter and columns go to the dataset's scan (PyArrow
expressions) or into the SQL.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from lakecompat.engines.base import Variant
from lakecompat.engines.formats.delta import DELTA
from lakecompat.engines.library.reader import LibraryReader
from lakecompat.engines.reading import reading
from lakecompat.engines.settings import SettingError, SettingsScope
from lakecompat.engines.shape import COUNT_COLUMN, Dialect, Predicate, Shape, shape_sql
from lakecompat.engines.table import (
    CHANGE_ORDINAL,
    CHANGE_TYPE,
    TableRef,
    reference_instant,
    reference_time,
)

#: The setting that chooses the read path (the variants set it), and its values.
READ_PATH = "read_path"
READ_PATHS = ("pyarrow", "datafusion")
#: DataFusion's SQL: names in double quotes, standard literals.
_DATAFUSION = Dialect(quote_char='"', backslash_escapes=False)
_OPEN = """\
{imports}import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

table = DeltaTable({path!r}{version})
"""
_PATHS = """\
if settings[{key!r}] == "datafusion":
    sql = {sql!r}
    answer = pa.table(QueryBuilder().register("t", table).execute(sql).read_all())
else:
    answer = table.to_pyarrow_dataset().to_table({scan})
{count}"""
#: The change data feed from the version after the reference, its change types in the oracle's
#: words (an update's pre- and post-image: a delete and an insert), its commit versions as
#: ordinals from that version.
_CHANGES = """\
import pyarrow.compute as pc

changes = pa.table(table.load_cdf(starting_version={start}).read_all())
kinds = {{"update_preimage": "DELETE", "update_postimage": "INSERT"}}
spelled = [kinds.get(k, k.upper()) for k in changes["{change_type}"].to_pylist()]
changes = changes.set_column(
    changes.schema.get_field_index("{change_type}"), "{change_type}", pa.array(spelled)
)
ordinals = pc.subtract(changes["_commit_version"], {start}).cast(pa.int32())
answer = changes.append_column("{change_ordinal}", ordinals)
"""
_PARQUET = """\
import pyarrow.parquet as pq

answer = pq.read_table({path!r})
"""
_COUNT = f"    answer = pa.table({{{COUNT_COLUMN!r}: pa.array([answer.num_rows], pa.int64())}})\n"


def _expression(predicate: Predicate) -> str:
    """A shape's predicate as a PyArrow dataset expression (`pc.field`)."""
    column = f"pc.field({', '.join(map(repr, predicate.path))})"
    if predicate.op == "is null":
        return f"{column}.is_null()"
    if predicate.op == "=":
        return f"({column} == {predicate.values[0]!r})"
    low, high = predicate.values
    return f"(({column} >= {low!r}) & ({column} <= {high!r}))"


def _imports(values: tuple[Any, ...]) -> str:
    """The imports a shape's literals need in the read's code."""
    lines = ["import pyarrow.compute as pc"]
    if any(isinstance(v, dt.date) for v in values):
        lines.insert(0, "import datetime")
    if any(isinstance(v, Decimal) for v in values):
        lines.insert(0, "from decimal import Decimal")
    return "\n".join(lines) + "\n"


class DeltaLakeEngine(LibraryReader):
    """delta-rs, reading each table from its location, through PyArrow or DataFusion."""

    name = "deltalake"
    display_name = "delta-rs"
    # delta-rs reads through delta-kernel-rs (the table's protocol and features) and, on its
    # DataFusion path, through Apache DataFusion: a defect may be filed with either.
    trackers = ("delta-io/delta-rs", "delta-io/delta-kernel-rs", "apache/datafusion")
    distribution = "deltalake"
    default_release = "1.6.6"
    release_env = "LAKECOMPAT_DELTALAKE_VERSION"
    release_help = "the delta-rs release the deltalake reader reads with (PyPI deltalake)"
    extra_packages = ("pyarrow",)
    imports = ("deltalake", "pyarrow")
    settings_help = f"deltalake: {READ_PATH}, pyarrow or datafusion (the variants set it)"
    readings = (
        reading(
            "delta",
            query_types=DELTA.query_types,  # every query type of the format
            variants=(
                Variant("pyarrow", {READ_PATH: "pyarrow"}),
                Variant("datafusion", {READ_PATH: "datafusion"}),
            ),
            # The two paths match a data file's columns to the table's differently (PyArrow by
            # the names in the file, DataFusion through the table's column mapping).
            matching_variants=("datafusion",),
        ),
    )

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        """delta-rs's reads take one setting, the read path (its variants set it)."""
        for key, value in settings.items():
            if key != READ_PATH:
                raise SettingError(
                    key, f"unknown key {key} for deltalake: its reads take {READ_PATH} only"
                )
            if value not in READ_PATHS:
                raise SettingError(
                    key,
                    f"deltalake's {READ_PATH} is {' or '.join(READ_PATHS)}, not {value!r}",
                )
        return {}

    def shaped_sql(self, table: TableRef, query_type: str, shape: Shape) -> str:
        """The read's code: the table at the query's version, then the read path the variant's
        `settings` choose; the changelog read is the change data feed."""
        path = self.path_of(table)
        if table.format == "parquet":
            return _PARQUET.format(path=path)
        version, imports = "", ""
        if query_type == "time_travel":
            version = f", version={int(reference_instant(table)[1])}"
        code = _OPEN
        if query_type == "changelog":
            start = int(reference_instant(table)[1]) + 1
            changes = _CHANGES.format(
                start=start, change_type=CHANGE_TYPE, change_ordinal=CHANGE_ORDINAL
            )
            return code.format(imports="", path=path, version="") + changes
        if query_type == "time_travel_timestamp":
            moment = dt.datetime.fromisoformat(reference_time(table)).replace(tzinfo=dt.UTC)
            imports = "import datetime\n"
            code += f"table.load_as_version({moment!r})  # {reference_time(table)} UTC\n"
        scan: list[str] = []
        predicate = shape.predicate
        if predicate is not None:
            imports = _imports(predicate.values)
            scan.append(f"filter={_expression(predicate)}")
        if shape.columns:
            scan.append(f"columns={list(shape.columns)!r}")
        sql = shape_sql("SELECT * FROM t", shape, _DATAFUSION)
        code = code.format(imports=imports, path=path, version=version)
        count = _COUNT if shape.counts else ""
        return code + _PATHS.format(key=READ_PATH, sql=sql, scan=", ".join(scan), count=count)
