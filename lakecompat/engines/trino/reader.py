"""Trino as a reader: one local coordinator with the Hive connector's `hive` catalog (plain
Parquet) and each table format's catalogs from its reading part (`hudi.py`, `iceberg.py`), on
the run's Hive Metastore with Trino's Hadoop file system (the Metastore keeps the tables'
`file:` locations). Its answers and errors are `answers.py`'s, its catalog files
`catalogs.py`'s.
"""

from __future__ import annotations

import contextlib
import json
import re
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakecompat.engines.attached import AttachError, trino_address
from lakecompat.engines.base import MetastoreReader, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, log_tail
from lakecompat.engines.metastore.service import hive_release, metastore_classpath
from lakecompat.engines.metastore.tables import table_for
from lakecompat.engines.releases import Releases
from lakecompat.engines.settings import CATALOG, SettingsScope
from lakecompat.engines.shape import ALL, TRINO, Shape
from lakecompat.engines.table import TableRef
from lakecompat.engines.trino.answers import error_message, failure_trace, to_arrow
from lakecompat.engines.trino.catalogs import HIVE_CATALOG, catalog_comments, hive_catalog, quote
from lakecompat.engines.trino.hudi import HUDI_CATALOG, NO_PUSHDOWN, TrinoHudi
from lakecompat.engines.trino.iceberg import ICEBERG_CATALOG, TrinoIceberg, iceberg_schema
from lakecompat.engines.trino.reading import METASTORE_PLACEHOLDER, TrinoReading
from lakecompat.engines.trino.runtime import (
    DEFAULT_TRINO_VERSION,
    TRINO_VERSION_ENV,
    TrinoServer,
    provision,
)
from lakecompat.engines.trino.settings import HELP, check_trino_settings

#: How Trino reads each table format, in the order its catalogs are written.
READINGS: tuple[type[TrinoReading], ...] = (TrinoHudi, TrinoIceberg)


def catalogs(
    metastore_uri: str, formats: tuple[str, ...] = ("hudi",), pushdown_off: bool = True
) -> dict[str, dict[str, str]]:
    """The catalog files of a coordinator that reads `formats`: each format's catalogs (its
    reading part's `add_catalogs`), and the Hive connector's (plain Parquet, the control
    check's table). Each catalog costs Trino a second or two of its start."""
    files: dict[str, dict[str, str]] = {}
    for part in READINGS:
        if part.format in formats:
            part.add_catalogs(files, metastore_uri, pushdown_off)
    files.setdefault(HIVE_CATALOG, hive_catalog(metastore_uri))
    return files


#: What each connector does by default that a query's evidence says beside its catalog.
CONNECTOR_NOTES = {part.connector: part.connector_note for part in READINGS}


#: How long the client waits for lakecompat's own coordinator to answer one HTTP request. Trino
#: answers every poll within about a second while a query runs; a coordinator that does not
#: answer in 10 s is hung. An attached coordinator keeps the client's defaults (three attempts
#: of 30 s each).
OWN_REQUEST_TIMEOUT_S = 10.0
#: Attempts per HTTP request to lakecompat's own coordinator: a second one rides out a single
#: slow answer on a busy machine, and a hung coordinator is found in 20 s instead of 90.
OWN_REQUEST_ATTEMPTS = 2


class TrinoEngine(MetastoreReader):
    """Trino (newest release that runs here) over the shared Metastore."""

    name = "trino"
    services = ("trino",)
    readings = READINGS
    dialect = TRINO
    display_name = "Trino"
    trackers = ("trinodb/trino",)
    release_env = TRINO_VERSION_ENV
    release_help = "the Trino release"
    release_artifact = ("io.trino", "trino-main")
    state_folders = ("trino",)
    scratch_folders = ("trino/var", "trino/data")
    partition_columns_last = True

    settings_help = HELP

    default_release = DEFAULT_TRINO_VERSION

    @classmethod
    def provision(cls, releases: Releases) -> None:
        metastore_classpath(hive_release(releases))
        provision(releases.engine(cls.name, cls.default_release))

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        files = catalogs("", scope.formats)
        return check_trino_settings(settings, scope, files)

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(context, carried, label)
        self._server: TrinoServer | AttachedTrino | None = None
        self._version = self.release
        self._address = context.attachments.trino
        #: The catalog files the coordinator was started with (None: not started).
        self._catalogs: dict[str, dict[str, str]] | None = None
        #: The tables each format's reading part registered since the coordinator started.
        self._registered: dict[str, set[str]] = {}

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
            self._catalogs = catalogs(
                self.context.metastore_address(),
                self.context.formats,
                pushdown_off=self.context.pushdown_off,
            )
            install = provision(self._version, iceberg=ICEBERG_CATALOG in self._catalogs)
            server = TrinoServer(self.context.run_dir / "trino", self.context.log_dir, install)
            self._server = server
            self._registered.clear()
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

    def _part(self, table_format: str) -> type[TrinoReading]:
        return self.reading(table_format)  # type: ignore[return-value]

    def registered(self, table_format: str) -> set[str]:
        """The tables of `table_format` registered since the coordinator started (its reading
        part keeps it)."""
        return self._registered.setdefault(table_format, set())

    def register(self, table: TableRef) -> None:
        if table.format == "parquet":
            self.context.register_in_metastore(table)
            return
        self._part(table.format).register(self, table)

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """The table format's catalog files, the table's registration and the query with its
        session properties (the reading part's `reproduction`)."""
        return self._part(table.format).reproduction(self, table, query_type, variant, shape)

    def reader_sql(self, table: TableRef, query_type: str, variant: Variant, shape: Shape) -> str:
        """A reproduction's `reader.sql`: the Trino release, `USE`, `SET SESSION` and the query."""
        sql = self.shaped_sql(table, query_type, shape)
        return f"-- Trino {self.version}\n{self._session_sql(variant)}{sql};\n"

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """The catalog the query ran in with its properties (as comments: they live in
        `etc/catalog/<catalog>.properties`), then `USE`, `SET SESSION` and the query."""
        catalog = variant.settings.get(CATALOG, HUDI_CATALOG)
        if self._address is not None:
            header = (
                f"-- Trino {self.version} at {self._address}: its catalog {catalog} is not "
                "lakecompat's, so its properties are not known here\n"
            )
        else:
            files = self._catalogs or catalogs(METASTORE_PLACEHOLDER)
            header = f"-- Trino {self.version}\n" + catalog_comments(
                catalog, files, CONNECTOR_NOTES
            )
        return f"{header}{self._session_sql(variant)}{self.shaped_sql(table, query_type, shape)};"

    def _session_sql(self, variant: Variant) -> str:
        """`USE catalog.schema;` and a `SET SESSION` for each of the variant's properties."""
        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, HUDI_CATALOG)
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
        return Variant("control", {CATALOG: HIVE_CATALOG})

    def variant_unsupported(self, variant: Variant) -> str | None:
        """An attached coordinator without the catalog that ignores Parquet statistics (it is
        optional there): the filter is not read with pushdown off."""
        server = self._server
        catalog = variant.settings.get(CATALOG, HUDI_CATALOG)
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

    def read_sql(self, table: TableRef, query_type: str) -> str:
        if table.format == "parquet":
            # The Hudi connector reads only Hudi tables; plain Parquet is the Hive connector's.
            name = quote(table_for(table, query_type))
            return f"SELECT * FROM {HIVE_CATALOG}.{self.context.database}.{name}"
        return self._part(table.format).read_sql(self, table, query_type)

    def query(self, sql: str, variant: Variant) -> pa.Table:
        import trino

        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, HUDI_CATALOG)
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
                raise QueryError(error_message(exc.error_name, exc.message), trace) from None
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
