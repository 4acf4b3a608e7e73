"""Trino as a reader: one local coordinator with the `hudi` and `hive` catalogs.

Both catalogs use the run's Hive Metastore and Trino's Hadoop file system (the Metastore keeps
the tables' `file:` locations). The `hive` catalog redirects Hudi tables to the `hudi` catalog,
as a production setup that queries everything through `hive` does. Variants choose the catalog
and how the Hudi connector matches Parquet columns to table columns: by name (the default) or
by position.

Trino's Hudi connector reads copy-on-write tables and the read-optimized view of merge-on-read
tables; it has no merge-on-read snapshot query. Those cells are `UNSUPPORTED`, and the runner
still reads `<table>_rt` so the evidence shows what a user querying it would get.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, ClassVar

import pyarrow as pa

from engines.base import (
    MetastoreReader,
    QueryError,
    RunContext,
    TableRef,
    Variant,
    log_tail,
    reference_instant,
)
from engines.metastore_tables import DATABASE, table_for
from engines.trino_runtime import TrinoServer, provision, trino_version
from harness.types import canonical_json

NESTED = ("row", "array", "map")
#: Trino reads a table's splits in parallel and reports the first that fails, so which Parquet
#: column (and which table type) this error names depends on timing. The reason keeps what
#: stays the same; Trino's whole message follows on the next line, for the evidence.
_UNSUPPORTED_COLUMN = re.compile(
    r"^Unsupported Trino column type \(.*\) for Parquet column \(.*\)$"
)
#: Variant setting that picks the catalog; every other setting is a Trino session property.
CATALOG = "catalog"
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_SIMPLE = {
    "boolean": pa.bool_(),
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "real": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "varchar": pa.string(),
    "char": pa.string(),
    "varbinary": pa.binary(),
}


def trino_arrow_type(type_name: str) -> pa.DataType:
    """The Arrow type of a Trino result column type (`integer`, `decimal(10,2)`, ...)."""
    base = type_name.split("(", 1)[0].strip()
    if base in _SIMPLE:
        return _SIMPLE[base]
    match = _DECIMAL.match(type_name)
    if match:
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    if base.startswith("timestamp"):
        zone = "UTC" if "with time zone" in type_name else None
        return pa.timestamp("us", tz=zone)
    return pa.string()


def to_arrow(description: list[Any], rows: list[list[Any]]) -> pa.Table:
    """Build the answer table from the client's column descriptions and Python values.

    Row, array and map values become canonical JSON text, the form nested values compare in.
    """
    columns = [(column[0], trino_arrow_type(column[1])) for column in description]
    nested = [column[1].split("(", 1)[0].strip() in NESTED for column in description]
    arrays = []
    for index, (_, kind) in enumerate(columns):
        values = [row[index] for row in rows]
        if nested[index]:
            values = [canonical_json(_plain(v)) for v in values]
        elif kind == pa.string():
            values = [None if v is None else _text(v) for v in values]
        arrays.append(pa.array(values, type=kind))
    return pa.Table.from_arrays(arrays, schema=pa.schema(columns))


def _plain(value: Any) -> Any:
    """Trino's row tuples (with field names), lists and dicts as plain Python values."""
    names = getattr(value, "_names", None)
    if names is not None:
        return {name: _plain(v) for name, v in zip(names, value, strict=True)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    """A value Trino returned for a column compared as text (dates in ISO form)."""
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def catalogs(metastore_uri: str) -> dict[str, dict[str, str]]:
    """The catalog files: Hudi connector, and the Hive connector redirecting Hudi tables."""
    shared = {
        "hive.metastore": "thrift",
        "hive.metastore.uri": metastore_uri,
        # The Metastore keeps `file:` locations, which only the Hadoop file system reads.
        "fs.hadoop.enabled": "true",
    }
    return {
        "hudi": {"connector.name": "hudi", **shared},
        "hive": {
            "connector.name": "hive",
            **shared,
            "hive.hudi-catalog-name": "hudi",
            "hive.timestamp-precision": "MICROSECONDS",
        },
    }


def quote(identifier: str) -> str:
    """Double-quote a Trino identifier."""
    return '"' + identifier.replace('"', '""') + '"'


class TrinoEngine(MetastoreReader):
    """Trino (newest release that runs here) over the shared Metastore."""

    name = "trino"
    partition_columns_last = True
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot",),
        "mor": ("read_optimized",),
    }
    _NO_TIME_TRAVEL = "Trino's Hudi connector has no time travel; `FOR VERSION AS OF` tried"
    probe_only: ClassVar[dict[tuple[str, str], str]] = {
        ("mor", "snapshot"): (
            "Trino's Hudi connector has no merge-on-read snapshot query: it reads base files "
            "only, without the log files"
        ),
        ("cow", "time_travel"): _NO_TIME_TRAVEL,
        ("mor", "time_travel"): _NO_TIME_TRAVEL,
    }
    unsupported: ClassVar[dict[str, str]] = {
        "incremental": "Trino's Hudi connector has no incremental query",
    }
    variants = (
        Variant("column_names", {CATALOG: "hudi", "hudi.use_parquet_column_names": "true"}),
        Variant("column_positions", {CATALOG: "hudi", "hudi.use_parquet_column_names": "false"}),
        # Through the Hive connector, which hands Hudi tables to the hudi catalog.
        Variant("hive_catalog", {CATALOG: "hive"}),
    )

    def __init__(
        self, context: RunContext, reader_hudi: str | None = None, label: str | None = None
    ) -> None:
        super().__init__(context, reader_hudi, label)
        self._server: TrinoServer | None = None
        self._version = trino_version()

    @property
    def version(self) -> str:
        return self._version

    def start(self) -> None:
        metastore = self.context.metastore()
        self._remember_metastore()
        install = provision(self._version)
        self._server = TrinoServer(self.context.run_dir / "trino", self.context.log_dir, install)
        self._server.start(catalogs(metastore.uri))

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def _process(self) -> Any:
        return self._server

    def responsive(self) -> bool:
        return self.alive() and self._server is not None and self._server.responsive()

    def register(self, table: TableRef) -> None:
        self.context.register_in_metastore(table)

    def read_sql(self, table: TableRef, query_type: str) -> str:
        name = quote(table_for(table, query_type))
        if table.format == "parquet":
            # The Hudi connector reads only Hudi tables; plain Parquet is the Hive connector's.
            return f"SELECT * FROM hive.{DATABASE}.{name}"
        if query_type == "time_travel":
            return f"SELECT * FROM {name} FOR VERSION AS OF {reference_instant(table)[0]}"
        return f"SELECT * FROM {name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        import trino

        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, "hudi")
        assert self._server is not None, "Trino is not started"
        connection = trino.dbapi.connect(
            host="127.0.0.1",
            port=self._server.port,
            user="lakecompat",
            catalog=catalog,
            schema=DATABASE,
            session_properties=settings,
            http_scheme="http",
        )
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(sql)
                rows = cursor.fetchall()
            except trino.exceptions.TrinoQueryError as exc:
                raise QueryError(_message(exc.error_name, exc.message)) from None
            return to_arrow(cursor.description or [], rows)
        finally:
            connection.close()

    def log_excerpt(self) -> str:
        logs = self.context.log_dir
        return log_tail(logs / "trino-server.log") or log_tail(logs / "trino.log")


def _message(error_name: str, message: str) -> str:
    """`NAME: message`; a message that depends on which split failed first gets a stable first
    line, with Trino's own message after it."""
    text = f"{error_name}: {message}"
    if _UNSUPPORTED_COLUMN.match(message):
        stable = "Unsupported Trino column type for a column of an old Parquet file"
        return f"{error_name}: {stable} (Trino's message names the first that failed)\n{text}"
    return text
