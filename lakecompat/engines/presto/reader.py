"""Presto as a reader: one local Presto 0.287 coordinator with the `hudi` and `hive` catalogs.

Both catalogs use the run's Hive Metastore, where the tables are registered as Hudi's hive
sync lays them out (`<table>`, `<table>_ro`, `<table>_rt`). The `hudi` catalog is Presto's
Hudi connector; the `hive` catalog is its Hive connector, which reads Hudi tables through
Hudi's input formats. Variants choose the catalog.

Presto 0.287's Metastore client calls `get_table`, which the Hive 4 Metastore no longer has, so
Presto reads only on the Hive 3 Metastore (the default, 3.1.3); with Hive 4
(`LAKECOMPAT_HIVE_VERSION=4.0.1`) its start fails at once, saying so, and its cells are
`ENGINE_FAILED`. Its Hudi is 0.14.0, which
reads tables of table version 6 (Hudi 0.15.0, or Hudi 1.x with `--table-version 6`) and fails
on the version 8 and 9 tables Hudi 1.x writes by default.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakecompat.engines.base import MetastoreReader, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import log_tail
from lakecompat.engines.metastore.ddl import registration_ddl
from lakecompat.engines.metastore.hive3 import is_hive3
from lakecompat.engines.metastore.service import HIVE_VERSION_ENV, hive_release, metastore_classpath
from lakecompat.engines.metastore.tables import table_for
from lakecompat.engines.presto.answer import to_arrow
from lakecompat.engines.presto.client import PrestoQueryError
from lakecompat.engines.presto.runtime import (
    HUDI_VERSION,
    PRESTO_VERSION,
    PrestoServer,
    catalogs,
    provision,
)
from lakecompat.engines.presto.settings import HELP, check_presto_settings
from lakecompat.engines.reading import reading
from lakecompat.engines.releases import Releases
from lakecompat.engines.settings import CATALOG, SettingsScope
from lakecompat.engines.shape import ALL, TRINO, Dialect, Shape
from lakecompat.engines.table import TableRef

#: Presto quotes names and spells literals as Trino does (both follow ANSI SQL).
PRESTO_SQL: Dialect = TRINO
#: How long a query that Presto's scheduler refuses with NO_NODES_AVAILABLE is asked again: its
#: node list catches up with the node within seconds of the start (see `PrestoEngine.query`).
NO_NODES_WAIT_S = 30.0
#: What the catalog files look like in evidence and reproductions, where the run's Metastore
#: address means nothing.
_METASTORE_PLACEHOLDER = "thrift://METASTORE_HOST:9083"


class MetastoreUnsupported(RuntimeError):
    """The run's Metastore is one Presto 0.287 cannot use."""


def metastore_problem(version: str, attached: bool) -> str | None:
    """Why Presto cannot read through the run's Metastore of Hive `version` (None: it can).
    An attached Metastore's release is not known here: Presto tries it."""
    if attached or is_hive3(version):
        return None
    return (
        f"Presto {PRESTO_VERSION}'s Metastore client calls get_table, which the Hive 4 "
        f"Metastore no longer has (this run's Metastore is Hive {version}); run with "
        f"{HIVE_VERSION_ENV}=3.1.3, or without {HIVE_VERSION_ENV} (Hive 3.1.3 is the default)"
    )


def quote(identifier: str) -> str:
    """Double-quote a Presto identifier."""
    return PRESTO_SQL.quote(identifier)


def catalog_comments(catalog: str, files: dict[str, dict[str, str]]) -> str:
    """The properties of `catalog` as SQL comments, under the file that holds them."""
    lines = [f"-- etc/catalog/{catalog}.properties:"]
    lines += [f"--   {key}={value}" for key, value in files[catalog].items()]
    return "\n".join(lines) + "\n"


def session_value(value: str) -> str:
    """A session property's value in SQL: booleans and numbers bare, text quoted."""
    if value in ("true", "false") or re.fullmatch(r"-?\d+", value):
        return value
    return "'" + value.replace("'", "''") + "'"


class PrestoEngine(MetastoreReader):
    """Presto 0.287 (the only release with its connectors served here) over the Hive 3
    Metastore."""

    name = "presto"
    services = ("presto",)
    dialect = PRESTO_SQL
    display_name = "Presto"
    trackers = ("prestodb/presto",)
    state_folders = ("presto",)
    scratch_folders = ("presto/data",)
    partition_columns_last = True
    readings = (
        reading(
            "hudi",
            query_types={"cow": ("snapshot",), "mor": ("snapshot", "read_optimized")},
            unsupported={
                "incremental": "Presto's Hudi and Hive connectors have no incremental query",
                "time_travel": (
                    "Presto's Hudi and Hive connectors have no time travel (the Hudi connector "
                    "answers `FOR VERSION AS OF` with NOT_SUPPORTED: This connector does not "
                    "support table version AS OF expression)"
                ),
            },
            variants=(
                Variant("hudi_catalog", {CATALOG: "hudi"}),
                # Through the Hive connector, which reads Hudi tables with Hudi's input formats.
                Variant("hive_catalog", {CATALOG: "hive"}),
            ),
        ),
    )

    @classmethod
    def provision(cls, releases: Releases) -> None:
        """Presto's jars, and the Hive 3 Metastore's; nothing with Hive 4, which Presto cannot
        use (its start says so)."""
        version = hive_release(releases)
        if is_hive3(version):
            metastore_classpath(version)
            provision()

    settings_help = HELP

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        return check_presto_settings(settings, scope)

    def __init__(
        self,
        context: RunContext,
        carried: Mapping[str, str] | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(context, carried, label)
        self._server: PrestoServer | None = None
        #: The catalog files the coordinator was started with (None: not started).
        self._catalogs: dict[str, dict[str, str]] | None = None

    @property
    def version(self) -> str:
        return PRESTO_VERSION

    def reads_with(self, table_format: str) -> str:
        """Presto reads Hudi tables with the Hudi bundle of its own release."""
        return HUDI_VERSION

    def carried_release(self, table_format: str) -> str:
        return HUDI_VERSION

    @property
    def java(self) -> str:
        return self._server.install.jdk.describe() if self._server is not None else ""

    def start(self) -> None:
        hive = hive_release(self.context.releases)
        problem = metastore_problem(hive, self.context.attachments.metastore is not None)
        if problem is not None:
            raise MetastoreUnsupported(problem)
        # Presto's JVM starts while the Metastore starts (on a thread of its own, or another
        # engine's); it is ready once both are and it has read in each catalog.
        with self.context.metastore_starting() as metastore:
            install = provision()
            server = PrestoServer(self.context.run_dir / "presto", self.context.log_dir, install)
            self._server = server
            self._catalogs = catalogs(self.context.metastore_address())
            server.start(self._catalogs, metastore)
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
        self.context.register_in_metastore(table)

    def read_sql(self, table: TableRef, query_type: str) -> str:
        name = quote(table_for(table, query_type))
        if table.format == "parquet":
            # The Hudi connector reads only Hudi tables; plain Parquet is the Hive connector's.
            return f"SELECT * FROM hive.{quote(self.context.database)}.{name}"
        return f"SELECT * FROM {name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        """Run `sql` in the variant's catalog. For a few seconds after it has started, Presto's
        scheduler may not yet know that its one node serves the catalog (NO_NODES_AVAILABLE,
        even after a first query ran): such a query is asked again, for `NO_NODES_WAIT_S` at
        most (the query timeout still bounds it)."""
        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, "hudi")
        assert self._server is not None, "Presto is not started"
        deadline = time.monotonic() + NO_NODES_WAIT_S
        while True:
            try:
                answer = self._server.client().execute(
                    sql, catalog, self.context.database, settings
                )
            except PrestoQueryError as exc:
                if exc.error_name != "NO_NODES_AVAILABLE" or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
                continue
            return to_arrow(answer.columns, answer.rows)

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """The catalog the query ran in with its properties (as comments: they live in
        `etc/catalog/<catalog>.properties`), then `USE`, `SET SESSION` and the query, for
        Presto's CLI."""
        catalog = variant.settings.get(CATALOG, "hudi")
        files = self._catalogs or catalogs(_METASTORE_PLACEHOLDER)
        header = f"-- Presto {self.version}\n" + catalog_comments(catalog, files)
        return f"{header}{self._session_sql(variant)}{self.shaped_sql(table, query_type, shape)};"

    def _session_sql(self, variant: Variant) -> str:
        """`USE catalog.schema;` and a `SET SESSION` for each of the variant's properties."""
        settings = dict(variant.settings)
        catalog = settings.pop(CATALOG, "hudi")
        session = "".join(f"SET SESSION {k} = {session_value(v)};\n" for k, v in settings.items())
        return f"USE {catalog}.{self.context.database};\n{session}"

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """The two catalog files (on a Hive 3 Metastore that has the table registered as Hive
        sync does: see `register.hql`) and the query with its session properties."""
        files = {
            f"etc/catalog/{name}.properties": "".join(f"{k}={v}\n" for k, v in props.items())
            for name, props in catalogs(_METASTORE_PLACEHOLDER).items()
        }
        header = f"-- Presto {self.version}\n"
        files["reader.sql"] = (
            f"{header}{self._session_sql(variant)}{self.shaped_sql(table, query_type, shape)};\n"
        )
        files["register.hql"] = "".join(f"{statement};\n" for statement in registration_ddl(table))
        return files

    def reproduction_query(self, files: dict[str, str]) -> tuple[str, Variant]:
        settings: dict[str, str] = {}
        query = []
        for statement in filter(None, (s.strip() for s in files["reader.sql"].split(";\n"))):
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

    @property
    def log_path(self) -> Path:
        return self.context.log_dir / "presto-server.log"

    def log_excerpt(self) -> str:
        logs = self.context.log_dir
        return log_tail(logs / "presto-server.log") or log_tail(logs / "presto.log")
