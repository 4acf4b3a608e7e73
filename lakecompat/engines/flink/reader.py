"""Flink as a reader: Flink SQL over Hudi's Flink connector (Flink 1.17, Hudi 0.14.0).

A Flink user declares a Hudi table with `CREATE TABLE ... WITH ('connector' = 'hudi', 'path'
= ...)`, naming its columns, and reads it in batch mode; there is no Metastore in between
(Hudi's Flink catalog for a Hive Metastore needs a Hive 2/3 client, and the run's Metastore is
Hive 4). So each read is a script: a temporary table declared with the table's latest schema
(data columns only, in Flink SQL types), then `SELECT *`. The query type is chosen with the
connector's options: `hoodie.datasource.query.type` for the read-optimized view, and
`read.start-commit` / `read.end-commit` for incremental reads and time travel.

Variant settings are further connector options, given to the `SELECT` as a table hint
(`/*+ OPTIONS(...) */`); the variants turn Hudi's schema-on-read (its evolved-schema reader)
off and on. The only Hudi Flink bundle that can be fetched here is 0.14.0 (see
`engines/flink_runtime.py`), and Hudi 0.14 cannot read tables that Hudi 1.x writes (table
version 8 and later). Flink is therefore not in the default matrix, which writes with 1.2.0;
it reads tables written by Hudi 0.15.0 (`--hudi-version 0.15.0 --engines flink`).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakecompat.engines.answers import canonical_json
from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError
from lakecompat.engines.flink.runtime import FLINK_VERSION, HUDI_VERSION, FlinkProcess, provision
from lakecompat.engines.flink.settings import HELP, check_flink_settings
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.reading import reading
from lakecompat.engines.settings import SettingsScope
from lakecompat.engines.shape import ALL, Shape
from lakecompat.engines.table import TableRef
from lakecompat.engines.table import reference_instant as reference_of

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_SCHEMA_ON_READ = "hoodie.schema.on.read.enable"
_TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
_SPARK_SIMPLE = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INT",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "binary": "BYTES",
    "date": "DATE",
    # Hudi's Flink reader maps Avro's timestamp-micros (Spark TIMESTAMP) to TIMESTAMP(6).
    "timestamp": "TIMESTAMP(6)",
    "timestamp_ntz": "TIMESTAMP(6)",
}
_ARROW = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "CHAR": pa.string(),
    "VARCHAR": pa.string(),
    "BINARY": pa.binary(),
    "VARBINARY": pa.binary(),
    "DATE": pa.date32(),
    "TIMESTAMP_WITHOUT_TIME_ZONE": pa.timestamp("us"),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": pa.timestamp("us", tz="UTC"),
}
_NESTED = ("ROW", "ARRAY", "MAP", "MULTISET")
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")
_SPLIT = ";\n"


def flink_type(spark_type: str) -> str:
    """The Flink SQL type of a Spark simple type string (`struct<a:int>` → ROW<`a` INT>)."""
    text = spark_type.strip()
    if text in _SPARK_SIMPLE:
        return _SPARK_SIMPLE[text]
    if text.startswith(("decimal(", "char(", "varchar(")):
        return text.upper()
    if text.startswith("array<") and text.endswith(">"):
        return f"ARRAY<{flink_type(text[6:-1])}>"
    if text.startswith("map<") and text.endswith(">"):
        key, value = _top_level_split(text[4:-1])
        return f"MAP<{flink_type(key)}, {flink_type(value)}>"
    if text.startswith("struct<") and text.endswith(">"):
        fields = []
        for part in _top_level_split(text[7:-1]):
            name, kind = part.split(":", 1)
            fields.append(f"{quote(name)} {flink_type(kind)}")
        return f"ROW<{', '.join(fields)}>"
    raise QueryError(f"no Flink SQL type for the Spark type {spark_type!r}")


def _top_level_split(text: str) -> list[str]:
    """`a:int,b:struct<c:int,d:int>` split at the commas outside angle brackets and parens."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def quote(identifier: str) -> str:
    """Back-quote a Flink SQL identifier."""
    return "`" + identifier.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A Flink SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def to_arrow(columns: list[dict[str, str]], rows: list[list[Any]]) -> pa.Table:
    """The answer as Arrow, from the service's column descriptions and JSON values."""
    fields, arrays = [], []
    for index, column in enumerate(columns):
        root, summary = column["root"], column["type"]
        values = [row[index] for row in rows]
        if root in _NESTED:
            kind: pa.DataType = pa.string()
            values = [canonical_json(v) for v in values]
        elif root == "DECIMAL":
            match = _DECIMAL.search(summary)
            precision, scale = (int(match.group(1)), int(match.group(2))) if match else (38, 18)
            kind = pa.decimal128(precision, scale)
            values = [None if v is None else Decimal(v) for v in values]
        else:
            kind = _ARROW.get(root, pa.string())
            values = [_value(v, kind) for v in values]
        fields.append(pa.field(column["name"], kind))
        arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _value(value: Any, kind: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_binary(kind):
        return base64.b64decode(value)
    if pa.types.is_date(kind):
        return dt.date(1970, 1, 1) + dt.timedelta(days=value)
    if pa.types.is_floating(kind) and isinstance(value, str):
        return float(value)  # NaN and the infinities come as text
    if pa.types.is_string(kind) and not isinstance(value, str):
        return str(value)
    return value


class FlinkEngine(Engine):
    """Flink 1.17.2 SQL in batch mode, with Hudi 0.14.0's Flink connector."""

    name = "flink"
    services = ("flink",)
    settings_help = HELP
    # Its shaped reads (a projection, a filter in the SELECT under the table hint) are not
    # written yet: Flink reads `SELECT *` only (docs/research/query-shapes.md).
    reads_shapes = False
    display_name = "Flink"
    trackers = ("apache/flink", "apache/hudi")
    state_folders = ("readers",)
    scratch_folders = ("readers",)
    # The read declares the partition columns after the data columns (see read_sql).
    partition_columns_last = True
    readings = (
        reading(
            "hudi",
            query_types=HUDI.query_types,  # every query type of the format
            variants=(Variant("default"), Variant("schema_on_read", {_SCHEMA_ON_READ: "true"})),
        ),
    )

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        return check_flink_settings(settings, scope)

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(context, carried, label)
        self._process: FlinkProcess | None = None

    @property
    def version(self) -> str:
        return FLINK_VERSION

    def reads_with(self, table_format: str) -> str:
        """Flink reads Hudi tables with the Hudi bundle it is provisioned with."""
        return HUDI_VERSION

    def carried_release(self, table_format: str) -> str:
        return HUDI_VERSION

    def start(self) -> None:
        install = provision()
        home = self.context.run_dir / "readers" / self.label
        self._process = FlinkProcess(self.label, home, self.context.log_dir, install)
        self._process.start()

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()

    def alive(self) -> bool:
        return self._process is not None and self._process.running

    def responsive(self) -> bool:
        if not self.alive() or self._process is None:
            return False
        try:
            ping = f"http://127.0.0.1:{self._process.port}/ping"
            with _NO_PROXY.open(ping, timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def read_sql(self, table: TableRef, query_type: str) -> str:
        # Data columns in the table's order, then the partition columns (as Hive sync and
        # Hudi's Flink catalog declare them).
        columns = [(n, t) for n, t in table.columns if not n.startswith("_hoodie_")]
        columns.sort(key=lambda column: column[0] in table.partition_by)
        declared = ",\n".join(f"  {quote(n)} {flink_type(t)}" for n, t in columns)
        partitioned = ""
        if table.partition_by:
            partitioned = f"\nPARTITIONED BY ({', '.join(map(quote, table.partition_by))})"
        options = {"path": table.path.as_uri()}
        if table.format == "parquet":
            options = {"connector": "filesystem", **options, "format": "parquet"}
        else:
            options = {"connector": "hudi", **options, "table.type": _TABLE_TYPES[table.table_type]}
            options.update(_query_options(table, query_type))
        listed = ",\n".join(f"  {literal(k)} = {literal(v)}" for k, v in options.items())
        name = quote(table.name)
        create = f"CREATE TEMPORARY TABLE {name} (\n{declared}\n){partitioned}\nWITH (\n{listed}\n)"
        return f"{create}{_SPLIT}SELECT * FROM {name}"

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """For Flink's SQL client: batch mode, the table's declaration, then the `SELECT` with
        the variant's options as its table hint, as the service runs them."""
        header = (
            f"-- Flink {self.version} with hudi-flink1.17-bundle {HUDI_VERSION}\n"
            "SET 'execution.runtime-mode' = 'batch';\n"
        )
        statements = _statements(self.shaped_sql(table, query_type, shape), variant)
        return header + _SPLIT.join(statements) + ";"

    @property
    def log_path(self) -> Path:
        return self.context.log_dir / f"{self.label}.log"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        """Run the script's statements in the service; Flink's error becomes a QueryError."""
        statements = _statements(sql, variant)
        assert self._process is not None, "Flink is not started"
        request = urllib.request.Request(
            f"http://127.0.0.1:{self._process.port}/query",
            data=json.dumps({"statements": statements}).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with _NO_PROXY.open(request) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code != 422:
                raise
            failure = json.loads(exc.read())
            trace = "\n".join([failure["root"], *(f"\tat {f}" for f in failure["trace"])])
            raise QueryError(_failure_text(failure), trace) from None
        return to_arrow(answer["columns"], answer["rows"])


def _statements(sql: str, variant: Variant) -> list[str]:
    """The script's statements, the variant's settings a table hint on the last (the read)."""
    statements = sql.split(_SPLIT)
    if variant.settings:
        hint = ", ".join(f"{literal(k)}={literal(v)}" for k, v in variant.settings.items())
        statements[-1] += f" /*+ OPTIONS({hint}) */"
    return statements


def _query_options(table: TableRef, query_type: str) -> dict[str, str]:
    """The Hudi connector options that make a read the given query type."""
    if query_type == "read_optimized":
        return {"hoodie.datasource.query.type": "read_optimized"}
    if query_type == "incremental":
        # Flink's start commit is inclusive; the reference commit's changes are not wanted.
        requested, _ = reference_of(table)
        return {"read.start-commit": str(int(requested) + 1)}
    if query_type == "time_travel":
        # `read.end-commit` alone reads only that commit's changes (apache/hudi#8359).
        requested, _ = reference_of(table)
        return {"read.start-commit": "earliest", "read.end-commit": requested}
    return {}


def _failure_text(failure: dict[str, Any]) -> str:
    """The root cause first (Flink wraps most errors in one that only names the table), then
    Flink's own error and where the cause was thrown, in Hudi or Flink."""
    frames = [
        f for f in failure["trace"] if f.startswith(("org.apache.hudi.", "org.apache.flink."))
    ]
    first = failure["root"]
    thrower = next((f for f in frames if ".ValidationUtils." not in f), None)
    if first.endswith(": null") and thrower:
        first = f"{first.removesuffix(': null')} (no message) at {thrower}"
    lines = [first]
    if failure["error"] != failure["root"]:
        lines.append(f"in Flink: {failure['error']}")
    lines += [f"at {frame}" for frame in frames[:3]]
    return "\n".join(lines)
