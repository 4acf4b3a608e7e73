"""How Trino reads Iceberg tables: the Iceberg connector on the run's Metastore.

Trino has no catalog that reads an Iceberg table from its folder: each Iceberg table is
registered in the Metastore with the `iceberg` catalog's `register_table` procedure (in a
schema of its own, `<database>_iceberg`, as the Hudi table of the same scenario has the name),
then read with the snapshot, `FOR VERSION AS OF` the reference snapshot for time travel, and
the `table_changes` table function for the changelog.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

from lakecompat.engines.errors import QueryError
from lakecompat.engines.reading import Variant
from lakecompat.engines.settings import CATALOG
from lakecompat.engines.shape import ALL, Shape
from lakecompat.engines.table import (
    TableRef,
    current_snapshot_id,
    iceberg_metadata,
    query_types_except,
    reference_instant,
    reference_time,
)
from lakecompat.engines.trino.catalogs import quote
from lakecompat.engines.trino.reading import METASTORE_PLACEHOLDER, TrinoReading

if TYPE_CHECKING:
    from lakecompat.engines.trino.reader import TrinoEngine

#: The catalog that reads Iceberg tables, on the run's Metastore.
ICEBERG_CATALOG = "iceberg"


def iceberg_schema(database: str) -> str:
    """The schema lakecompat registers Iceberg tables in: beside the run's database, since a
    scenario's Hudi and Iceberg tables have the same name."""
    return f"{database}_iceberg"


class TrinoIceberg(TrinoReading):
    """The Iceberg connector: every query type of the format but the incremental read."""

    format = "iceberg"
    connector = "iceberg"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = query_types_except("iceberg", "incremental")
    unsupported: ClassVar[dict[str, str]] = {
        "incremental": (
            "Trino's Iceberg connector has no incremental read: a query reads one snapshot "
            "(`FOR VERSION AS OF`, `FOR TIMESTAMP AS OF`)"
        )
    }
    variants = (Variant("default", {CATALOG: ICEBERG_CATALOG}),)

    @classmethod
    def add_catalogs(
        cls, files: dict[str, dict[str, str]], metastore_uri: str, pushdown_off: bool
    ) -> None:
        """The Iceberg connector on the same Metastore, where lakecompat registers each
        Iceberg table (`register_table`)."""
        files[ICEBERG_CATALOG] = {
            "connector.name": cls.connector,
            "iceberg.catalog.type": "hive_metastore",
            "hive.metastore.uri": metastore_uri,
            "fs.hadoop.enabled": "true",
            "iceberg.register-table-procedure.enabled": "true",
        }

    @classmethod
    def register(cls, engine: TrinoEngine, table: TableRef) -> None:
        """Register the table in the `iceberg` catalog (once per start: a registration points
        at the table's metadata file of the moment, and the writer is done with it). The
        location given must be the one the metadata declares, exactly."""
        schema = iceberg_schema(engine.context.database)
        location = json.loads(iceberg_metadata(table.path).read_text())["location"]
        variant = Variant("register", {CATALOG: ICEBERG_CATALOG})
        registered = engine.registered(cls.format)
        if not registered:
            engine.query(f"CREATE SCHEMA IF NOT EXISTS {quote(schema)}", variant)
        if table.name in registered:
            return
        names = f"schema_name => '{schema}', table_name => '{table.name}'"
        register = f"CALL system.register_table({names}, table_location => '{location}')"
        try:
            engine.query(register, variant)
        except QueryError as exc:
            if "already exists" not in str(exc):
                raise
            # Registered by an earlier start on the same Metastore: point it at this table.
            engine.query(f"CALL system.unregister_table({names})", variant)
            engine.query(register, variant)
        registered.add(table.name)

    @classmethod
    def read_sql(cls, engine: TrinoEngine, table: TableRef, query_type: str) -> str:
        name = f"{ICEBERG_CATALOG}.{quote(iceberg_schema(engine.context.database))}"
        name += f".{quote(table.name)}"
        if query_type == "time_travel":
            return f"SELECT * FROM {name} FOR VERSION AS OF {reference_instant(table)[1]}"
        if query_type == "time_travel_timestamp":
            moment = f"TIMESTAMP '{reference_time(table)} UTC'"
            return f"SELECT * FROM {name} FOR TIMESTAMP AS OF {moment}"
        if query_type == "changelog":
            return cls._changes_sql(engine, table)
        return f"SELECT * FROM {name}"

    @staticmethod
    def _changes_sql(engine: TrinoEngine, table: TableRef) -> str:
        """The changelog read: Trino's `table_changes` table function from the reference
        snapshot (exclusive) to the current one (inclusive: it takes both ids)."""
        schema = iceberg_schema(engine.context.database)
        arguments = (
            f"schema_name => '{schema}', table_name => '{table.name}', "
            f"start_snapshot_id => {reference_instant(table)[1]}, "
            f"end_snapshot_id => {current_snapshot_id(table.path)}"
        )
        return f"SELECT * FROM TABLE({ICEBERG_CATALOG}.system.table_changes({arguments}))"

    @classmethod
    def reproduction(
        cls,
        engine: TrinoEngine,
        table: TableRef,
        query_type: str,
        variant: Variant,
        shape: Shape = ALL,
    ) -> dict[str, str]:
        """The `iceberg` catalog file, the table's registration in it (Trino has no catalog
        that reads a table by its folder) and the query."""
        found: dict[str, dict[str, str]] = {}
        cls.add_catalogs(found, METASTORE_PLACEHOLDER, pushdown_off=True)
        schema = iceberg_schema(engine.context.database)
        location = json.loads(iceberg_metadata(table.path).read_text())["location"]
        names = f"schema_name => '{schema}', table_name => '{table.name}'"
        return {
            f"etc/catalog/{ICEBERG_CATALOG}.properties": "".join(
                f"{k}={v}\n" for k, v in found[ICEBERG_CATALOG].items()
            ),
            "register.sql": (
                f"CREATE SCHEMA IF NOT EXISTS {ICEBERG_CATALOG}.{quote(schema)};\n"
                f"CALL {ICEBERG_CATALOG}.system.register_table({names}, "
                f"table_location => '{location}');\n"
            ),
            "reader.sql": engine.reader_sql(table, query_type, variant, shape),
        }
