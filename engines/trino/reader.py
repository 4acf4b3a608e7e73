"""Trino as a reader: one local coordinator with the `hudi` and `hive` catalogs, and the
`iceberg` catalog in a run that reads Iceberg tables.

Both catalogs use the run's Hive Metastore and Trino's Hadoop file system (the Metastore keeps
the tables' `file:` locations). The `hive` catalog redirects Hudi tables to the `hudi` catalog,
as a production setup that queries everything through `hive` does. Variants choose the catalog
and how the Hudi connector matches Parquet columns to table columns: by name (the default) or
by position.

Trino's Hudi connector reads copy-on-write tables and the read-optimized view of merge-on-read
tables; it has no merge-on-read snapshot query. Those cells are `UNSUPPORTED`, and the runner
still reads `<table>_rt` so the evidence shows what a user querying it would get.

Trino has no catalog that reads an Iceberg table from its folder: each Iceberg table is
registered in the Metastore with the `iceberg` catalog's `register_table` procedure (in a
schema of its own, `<database>_iceberg`, as the Hudi table of the same scenario has the name),
then read with the snapshot, and `FOR VERSION AS OF` the reference snapshot for time travel.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import urllib.request
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from engines.answers import SQL_TYPES, canonical_json
from engines.attached import AttachError, trino_address
from engines.base import MetastoreReader, Variant
from engines.context import RunContext
from engines.errors import QueryError, log_tail
from engines.metastore.ddl import registration_ddl
from engines.metastore.service import hive_version, metastore_classpath
from engines.metastore.tables import table_for
from engines.settings import CATALOG, SettingsScope
from engines.shape import ALL, PUSHDOWN_OFF, TRINO, Shape
from engines.table import (
    TableRef,
    current_snapshot_id,
    iceberg_metadata,
    query_types_except,
    reference_instant,
    reference_time,
)
from engines.trino.runtime import TRINO_VERSION_ENV, TrinoServer, provision, trino_version
from engines.trino.settings import HELP, check_trino_settings

NESTED = ("row", "array", "map")
#: Trino reads a table's splits in parallel and reports the first that fails, so which Parquet
#: column (and which table type) this error names depends on timing. The reason keeps what
#: stays the same; Trino's whole message follows on the next line, for the evidence.
_UNSUPPORTED_COLUMN = re.compile(
    r"^Unsupported Trino column type \(.*\) for Parquet column \(.*\)$"
)
#: A filter's statistics check of an old file (trinodb/trino#30544): the statistics and the
#: file it names are those of whichever file failed first.
_CORRUPTED_STATISTICS = re.compile(
    r'Malformed Parquet file\. Corrupted statistics for column ("[^"]*")'
)
#: The catalog that reads Iceberg tables, on the run's Metastore.
ICEBERG_CATALOG = "iceberg"
#: The Hudi catalog whose Parquet reader ignores statistics: no row-group, column-index or
#: bloom-filter pruning (`TrinoEngine.pushdown_off`).
NO_PUSHDOWN = "hudi_pushdown_off"
#: How long the client waits for lakecompat's own coordinator to answer one HTTP request. Trino
#: answers every poll within about a second while a query runs; a coordinator that does not
#: answer in 10 s is hung. An attached coordinator keeps the client's defaults (three attempts
#: of 30 s each).
OWN_REQUEST_TIMEOUT_S = 10.0
#: Attempts per HTTP request to lakecompat's own coordinator: a second one rides out a single
#: slow answer on a busy machine, and a hung coordinator is found in 20 s instead of 90.
OWN_REQUEST_ATTEMPTS = 2
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_SIMPLE = SQL_TYPES


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


def catalogs(
    metastore_uri: str, iceberg: bool = False, hudi: bool = True, pushdown_off: bool = True
) -> dict[str, dict[str, str]]:
    """The catalog files: the Hive connector (plain Parquet, the control check's table); with
    `hudi`, the Hudi connector, the Hive connector redirecting Hudi tables to it and (with
    `pushdown_off`) the Hudi catalog that ignores Parquet statistics; with `iceberg`, the
    Iceberg connector on the same Metastore, where lakecompat registers each Iceberg table
    (`register_table`). Each catalog costs Trino a second or two of its start."""
    shared = {
        "hive.metastore": "thrift",
        "hive.metastore.uri": metastore_uri,
        # The Metastore keeps `file:` locations, which only the Hadoop file system reads.
        "fs.hadoop.enabled": "true",
    }
    files = {
        "hudi": {"connector.name": "hudi", **shared},
        # The Hudi connector of Trino 483 has no session property that turns pushdown off:
        # Parquet's generic reader property does, per catalog.
        NO_PUSHDOWN: {"connector.name": "hudi", **shared, "parquet.ignore-statistics": "true"},
        "hive": {
            "connector.name": "hive",
            **shared,
            "hive.hudi-catalog-name": "hudi",
            "hive.timestamp-precision": "MICROSECONDS",
        },
    }
    if not hudi:
        del files["hudi"], files[NO_PUSHDOWN], files["hive"]["hive.hudi-catalog-name"]
    elif not pushdown_off:
        del files[NO_PUSHDOWN]
    if iceberg:
        files[ICEBERG_CATALOG] = {
            "connector.name": "iceberg",
            "iceberg.catalog.type": "hive_metastore",
            "hive.metastore.uri": metastore_uri,
            "fs.hadoop.enabled": "true",
            "iceberg.register-table-procedure.enabled": "true",
        }
    return files


def iceberg_schema(database: str) -> str:
    """The schema lakecompat registers Iceberg tables in: beside the run's database, since a
    scenario's Hudi and Iceberg tables have the same name."""
    return f"{database}_iceberg"


def catalog_comments(catalog: str, files: dict[str, dict[str, str]]) -> str:
    """The properties of `catalog` as SQL comments, and those of the catalog it hands Hudi
    tables to (`hive.hudi-catalog-name`), each under the file that holds them."""
    properties = files[catalog]
    lines = [f"-- etc/catalog/{catalog}.properties:"]
    lines += [f"--   {key}={value}" for key, value in properties.items()]
    if properties.get("connector.name") == "hudi":
        lines.append(f"--   ({_COLUMN_NAMES}=true unless set: Trino's default)")
    target = properties.get("hive.hudi-catalog-name")
    if target in files and target != catalog:
        lines.append(f"-- which hands Hudi tables to catalog {target}:")
        lines.append(catalog_comments(target, files).rstrip("\n"))
    return "\n".join(lines) + "\n"


#: The Hudi connector's catalog property matching Parquet columns by name (the session
#: property `<catalog>.use_parquet_column_names` overrides it per query).
_COLUMN_NAMES = "hudi.parquet.use-column-names"


def quote(identifier: str) -> str:
    """Double-quote a Trino identifier."""
    return '"' + identifier.replace('"', '""') + '"'


class TrinoEngine(MetastoreReader):
    """Trino (newest release that runs here) over the shared Metastore."""

    name = "trino"
    formats = ("hudi", "iceberg")
    dialect = TRINO
    display_name = "Trino"
    trackers = ("trinodb/trino",)
    release_env = TRINO_VERSION_ENV
    release_help = "the Trino release"
    release_artifact = ("io.trino", "trino-main")
    state_folders = ("trino",)
    scratch_folders = ("trino/var", "trino/data")
    partition_columns_last = True
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot",),
        "mor": ("read_optimized",),
    }
    format_query_types: ClassVar[dict[str, dict[str, tuple[str, ...]]]] = {
        "iceberg": query_types_except("iceberg", "incremental")
    }
    format_unsupported: ClassVar[dict[str, dict[str, str]]] = {
        "iceberg": {
            "incremental": (
                "Trino's Iceberg connector has no incremental read: a query reads one snapshot "
                "(`FOR VERSION AS OF`, `FOR TIMESTAMP AS OF`)"
            )
        }
    }
    format_variants: ClassVar[dict[str, tuple[Variant, ...]]] = {
        "iceberg": (Variant("default", {CATALOG: ICEBERG_CATALOG}),)
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
    # By position rather than by name (the Hive connector hands tables to the same reader).
    matching_variants = ("column_positions",)

    settings_help = HELP

    @classmethod
    def release(cls) -> str:
        return trino_version()

    @classmethod
    def provision(cls, hudi: str, reader_hudi: str | None = None) -> None:
        metastore_classpath(hive_version())
        provision()

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        files = catalogs("", iceberg="iceberg" in scope.formats, hudi="hudi" in scope.formats)
        return check_trino_settings(settings, scope, files)

    def __init__(
        self, context: RunContext, reader_hudi: str | None = None, label: str | None = None
    ) -> None:
        super().__init__(context, reader_hudi, label)
        self._server: TrinoServer | AttachedTrino | None = None
        self._version = trino_version()
        self._address = context.attachments.trino
        #: The catalog files the coordinator was started with (None: not started).
        self._catalogs: dict[str, dict[str, str]] | None = None
        #: The Iceberg tables registered since the coordinator started.
        self._iceberg_tables: set[str] = set()

    @property
    def version(self) -> str:
        return self._version

    @property
    def java(self) -> str:
        # An attached server's JVM is not ours to see.
        return self._server.install.jdk.describe() if isinstance(self._server, TrinoServer) else ""

    @property
    def attached(self) -> bool:
        return self._address is not None

    def start(self) -> None:
        if self._address is not None:
            self.context.metastore()
            self._remember_metastore()
            attached = AttachedTrino(self._address)
            self._version = attached.check()
            self._server = attached
            return
        # Trino connects to the Metastore only when it queries: its JVM starts while the
        # Metastore starts (on a thread of its own, or another engine's), and is ready only
        # once both are.
        with self.context.metastore_starting():
            iceberg = "iceberg" in self.context.formats
            install = provision(self._version, iceberg=iceberg)
            server = TrinoServer(self.context.run_dir / "trino", self.context.log_dir, install)
            self._server = server
            self._catalogs = catalogs(
                self.context.metastore_address(),
                iceberg=iceberg,
                hudi="hudi" in self.context.formats,
                pushdown_off=self.context.pushdown_off,
            )
            self._iceberg_tables.clear()
            server.start(self._catalogs)
        self._remember_metastore()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def _process(self) -> Any:
        return self._server

    def responsive(self) -> bool:
        return self.alive() and self._server is not None and self._server.responsive()

    def register(self, table: TableRef) -> None:
        if table.format == "iceberg":
            self._register_iceberg(table)
            return
        self.context.register_in_metastore(table)

    def _register_iceberg(self, table: TableRef) -> None:
        """Register an Iceberg table in the `iceberg` catalog (once per start: a registration
        points at the table's metadata file of the moment, and the writer is done with it). The
        location given must be the one the metadata declares, exactly."""
        schema = iceberg_schema(self.context.database)
        location = json.loads(iceberg_metadata(table.path).read_text())["location"]
        variant = Variant("register", {CATALOG: ICEBERG_CATALOG})
        if not self._iceberg_tables:
            self.query(f"CREATE SCHEMA IF NOT EXISTS {quote(schema)}", variant)
        if table.name in self._iceberg_tables:
            return
        names = f"schema_name => '{schema}', table_name => '{table.name}'"
        register = f"CALL system.register_table({names}, table_location => '{location}')"
        try:
            self.query(register, variant)
        except QueryError as exc:
            if "already exists" not in str(exc):
                raise
            # Registered by an earlier start on the same Metastore: point it at this table.
            self.query(f"CALL system.unregister_table({names})", variant)
            self.query(register, variant)
        self._iceberg_tables.add(table.name)

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """The two catalog files (on a Metastore that has the table registered as Hive sync
        does: see `register.hql`) and the query with its session properties. An Iceberg table:
        the `iceberg` catalog file, its registration (`register.sql`) and the query."""
        if table.format == "iceberg":
            return self._iceberg_reproduction(table, query_type, variant, shape)
        files = {
            f"etc/catalog/{name}.properties": "".join(f"{k}={v}\n" for k, v in props.items())
            for name, props in catalogs("thrift://METASTORE_HOST:9083").items()
        }
        header = f"-- Trino {self.version}\n"
        files["reader.sql"] = (
            f"{header}{self._session_sql(variant)}{self.shaped_sql(table, query_type, shape)};\n"
        )
        files["register.hql"] = "".join(f"{statement};\n" for statement in registration_ddl(table))
        return files

    def _iceberg_reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape
    ) -> dict[str, str]:
        """The `iceberg` catalog file, the table's registration in it (Trino has no catalog
        that reads a table by its folder) and the query."""
        properties = catalogs("thrift://METASTORE_HOST:9083", iceberg=True)[ICEBERG_CATALOG]
        schema = iceberg_schema(self.context.database)
        location = json.loads(iceberg_metadata(table.path).read_text())["location"]
        names = f"schema_name => '{schema}', table_name => '{table.name}'"
        header = f"-- Trino {self.version}\n"
        sql = self.shaped_sql(table, query_type, shape)
        return {
            f"etc/catalog/{ICEBERG_CATALOG}.properties": "".join(
                f"{k}={v}\n" for k, v in properties.items()
            ),
            "register.sql": (
                f"CREATE SCHEMA IF NOT EXISTS {ICEBERG_CATALOG}.{quote(schema)};\n"
                f"CALL {ICEBERG_CATALOG}.system.register_table({names}, "
                f"table_location => '{location}');\n"
            ),
            "reader.sql": f"{header}{self._session_sql(variant)}{sql};\n",
        }

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """The catalog the query ran in with its properties (as comments: they live in
        `etc/catalog/<catalog>.properties`), then `USE`, `SET SESSION` and the query."""
        catalog = variant.settings.get(CATALOG, "hudi")
        if self._address is not None:
            header = (
                f"-- Trino {self.version} at {self._address}: its catalog {catalog} is not "
                "lakecompat's, so its properties are not known here\n"
            )
        else:
            files = self._catalogs or catalogs("thrift://METASTORE_HOST:9083")
            header = f"-- Trino {self.version}\n" + catalog_comments(catalog, files)
        return f"{header}{self._session_sql(variant)}{self.shaped_sql(table, query_type, shape)};"

    def _session_sql(self, variant: Variant) -> str:
        """`USE catalog.schema;` and a `SET SESSION` for each of the variant's properties."""
        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, "hudi")
        session = "".join(f"SET SESSION {k} = {_session_value(v)};\n" for k, v in settings.items())
        return f"USE {catalog}.{self._schema(catalog)};\n{session}"

    def _schema(self, catalog: str) -> str:
        """The schema the run's tables are in, in `catalog`."""
        database = self.context.database
        return iceberg_schema(database) if catalog == ICEBERG_CATALOG else database

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        settings: dict[str, str] = {}
        statements = [s.strip() for s in files["reader.sql"].split(";\n")]
        query = []
        for statement in filter(None, statements):
            lines = [line for line in statement.splitlines() if not line.startswith("--")]
            text = "\n".join(lines).removesuffix(";")
            if text.startswith("USE "):
                settings[CATALOG] = text.removeprefix("USE ").split(".", 1)[0]
            elif text.startswith("SET SESSION "):
                key, _, value = text.removeprefix("SET SESSION ").partition(" = ")
                settings[key] = value.strip("'").replace("''", "'")
            elif text:
                query.append(text)
        return ";\n".join(query), Variant("reproduction", settings)

    def control_variant(self) -> Variant:
        """The Hive catalog: every run has it (the Hudi catalogs only a run of Hudi tables),
        and a plain Parquet table is the Hive connector's."""
        return Variant("control", {CATALOG: "hive"})

    def variant_unsupported(self, variant: Variant) -> str | None:
        """An attached coordinator without the catalog that ignores Parquet statistics (it is
        optional there): the filter is not read with pushdown off."""
        server = self._server
        catalog = variant.settings.get(CATALOG, "hudi")
        if (
            isinstance(server, AttachedTrino)
            and catalog == NO_PUSHDOWN
            and catalog not in server.catalogs
        ):
            return (
                f"the attached Trino has no catalog {NO_PUSHDOWN} (a `hudi` catalog with "
                "parquet.ignore-statistics=true), so it does not read with pushdown off"
            )
        return None

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """The variant in the Hudi catalog that ignores Parquet statistics (`NO_PUSHDOWN`), its
        session properties renamed to that catalog; None for a variant in another catalog."""
        settings = dict(variant.settings)
        if settings.pop(CATALOG, "hudi") != "hudi":
            return None
        moved = {
            (
                f"{NO_PUSHDOWN}.{key.removeprefix('hudi.')}" if key.startswith("hudi.") else key
            ): value
            for key, value in settings.items()
        }
        return Variant(variant.name + PUSHDOWN_OFF, {CATALOG: NO_PUSHDOWN, **moved})

    def read_sql(self, table: TableRef, query_type: str) -> str:
        if table.format == "iceberg":
            name = f"{ICEBERG_CATALOG}.{quote(iceberg_schema(self.context.database))}"
            name += f".{quote(table.name)}"
            if query_type == "time_travel":
                return f"SELECT * FROM {name} FOR VERSION AS OF {reference_instant(table)[1]}"
            if query_type == "time_travel_timestamp":
                moment = f"TIMESTAMP '{reference_time(table)} UTC'"
                return f"SELECT * FROM {name} FOR TIMESTAMP AS OF {moment}"
            if query_type == "changelog":
                return self._changes_sql(table)
            return f"SELECT * FROM {name}"
        name = quote(table_for(table, query_type))
        if table.format == "parquet":
            # The Hudi connector reads only Hudi tables; plain Parquet is the Hive connector's.
            return f"SELECT * FROM hive.{self.context.database}.{name}"
        if query_type == "time_travel":
            return f"SELECT * FROM {name} FOR VERSION AS OF {reference_instant(table)[0]}"
        return f"SELECT * FROM {name}"

    def _changes_sql(self, table: TableRef) -> str:
        """The changelog read: Trino's `table_changes` table function from the reference
        snapshot (exclusive) to the current one (inclusive: it takes both ids)."""
        schema = iceberg_schema(self.context.database)
        arguments = (
            f"schema_name => '{schema}', table_name => '{table.name}', "
            f"start_snapshot_id => {reference_instant(table)[1]}, "
            f"end_snapshot_id => {current_snapshot_id(table.path)}"
        )
        return f"SELECT * FROM TABLE({ICEBERG_CATALOG}.system.table_changes({arguments}))"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        import trino

        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, "hudi")
        server = self._server
        assert server is not None, "Trino is not started"
        connection = trino.dbapi.connect(
            host=server.host,
            port=server.port,
            user="lakecompat",
            catalog=catalog,
            schema=self._schema(catalog),
            session_properties=settings,
            http_scheme=server.scheme,
            **(
                {"request_timeout": OWN_REQUEST_TIMEOUT_S, "max_attempts": OWN_REQUEST_ATTEMPTS}
                if isinstance(server, TrinoServer)
                else {}
            ),
        )
        try:
            cursor = connection.cursor()
            server.current = cursor
            try:
                cursor.execute(sql)
                rows = cursor.fetchall()
            except trino.exceptions.TrinoQueryError as exc:
                trace = failure_trace(exc.failure_info or {})
                raise QueryError(_message(exc.error_name, exc.message), trace) from None
            finally:
                server.current = None
            return to_arrow(cursor.description or [], rows)
        finally:
            connection.close()

    @property
    def log_path(self) -> Path | None:
        """The server log of lakecompat's own coordinator; an attached one's is not known."""
        return None if self._address is not None else self.context.log_dir / "trino-server.log"

    def log_excerpt(self) -> str:
        logs = self.context.log_dir
        return log_tail(logs / "trino-server.log") or log_tail(logs / "trino.log")


def _session_value(value: str) -> str:
    """A session property's value in SQL: booleans and numbers bare, text quoted."""
    if value in ("true", "false") or re.fullmatch(r"-?\d+", value):
        return value
    return "'" + value.replace("'", "''") + "'"


class AttachedTrino:
    """A Trino coordinator someone else runs: checked, queried, never started or killed."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.scheme, self.host, self.port = trino_address(address)
        #: The cursor of the query running now, which `kill()` cancels.
        self.current: Any = None
        #: The catalogs the coordinator has (known once `check` ran).
        self.catalogs: set[str] = set()

    def info(self, timeout: float = 5) -> dict[str, Any]:
        """The coordinator's `/v1/info`."""
        url = f"{self.scheme}://{self.host}:{self.port}/v1/info"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=timeout) as response:
            return json.loads(response.read(1 << 20))

    def check(self) -> str:
        """Its version, once it answers and has the catalogs lakecompat reads through."""
        try:
            info = self.info()
        except Exception as exc:  # noqa: BLE001 - re-raised, naming the option
            raise AttachError(f"--trino {self.address}: no Trino answers there ({exc})") from None
        if info.get("starting"):
            raise AttachError(f"--trino {self.address}: Trino is still starting; try again")
        import trino

        connection = trino.dbapi.connect(
            host=self.host, port=self.port, user="lakecompat", http_scheme=self.scheme
        )
        try:
            cursor = connection.cursor()
            cursor.execute("SHOW CATALOGS")
            found = {row[0] for row in cursor.fetchall()}
        finally:
            connection.close()
        self.catalogs = found
        missing = sorted({"hudi", "hive"} - found)
        if missing:
            raise AttachError(
                f"--trino {self.address}: no catalog named {' or '.join(missing)}; lakecompat "
                "reads through a `hudi` catalog and a `hive` catalog (with "
                "hive.hudi-catalog-name=hudi), both on the --metastore "
                "(see docs/attached-engines.md)"
            )
        return str(info.get("nodeVersion", {}).get("version", "?"))

    @property
    def running(self) -> bool:
        try:
            return not self.info().get("starting", False)
        except Exception:  # noqa: BLE001 - not answering is the answer
            return False

    def responsive(self) -> bool:
        return self.running

    def kill(self) -> None:
        """Cancel the query running now (a timeout); the coordinator is not lakecompat's."""
        cursor = self.current
        if cursor is not None:
            with contextlib.suppress(Exception):
                cursor.cancel()

    def stop(self) -> None:
        """Nothing: the coordinator is not lakecompat's."""


def failure_trace(info: dict[str, Any], caused: bool = False) -> str:
    """A Trino query's `failureInfo` (the exception on the coordinator, with its causes) in
    Java's stack trace form."""
    if not info:
        return ""
    prefix = "Caused by: " if caused else ""
    lines = [f"{prefix}{info.get('type', '?')}: {info.get('message') or ''}".rstrip(": ")]
    lines += [f"\tat {frame}" for frame in info.get("stack") or []]
    cause = failure_trace(info.get("cause") or {}, caused=True)
    return "\n".join(lines + ([cause] if cause else []))


def _message(error_name: str, message: str) -> str:
    """`NAME: message`; a message that depends on which split failed first gets a stable first
    line, with Trino's own message after it."""
    text = f"{error_name}: {message}"
    if _UNSUPPORTED_COLUMN.match(message):
        stable = "Unsupported Trino column type for a column of an old Parquet file"
        return f"{error_name}: {stable} (Trino's message names the first that failed)\n{text}"
    corrupted = _CORRUPTED_STATISTICS.match(message)
    if corrupted:
        # The statistics and the file it names are those of whichever file failed first.
        stable = f"Malformed Parquet file. Corrupted statistics for column {corrupted.group(1)}"
        return f"{error_name}: {stable} (Trino's message names the first file that failed)\n{text}"
    return text
