"""How Trino reads Hudi tables: the Hudi connector on the run's Metastore (where the tables are
registered as Hudi's hive sync does), directly or through the Hive connector, which hands Hudi
tables to it. Variants choose the catalog and how the connector matches Parquet columns to
table columns: by name (the default) or by position.

The Hudi connector reads copy-on-write tables and the read-optimized view of merge-on-read
tables; it has no merge-on-read snapshot query. Those cells are `UNSUPPORTED`, and the run still
reads `<table>_rt` so that the evidence shows what a user querying it would get.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakecompat.engines.metastore.ddl import registration_ddl
from lakecompat.engines.metastore.tables import table_for
from lakecompat.engines.reading import Variant
from lakecompat.engines.settings import CATALOG
from lakecompat.engines.shape import ALL, PUSHDOWN_OFF, Shape
from lakecompat.engines.table import TableRef, reference_instant
from lakecompat.engines.trino.catalogs import HIVE_CATALOG, hive_catalog, quote, shared_properties
from lakecompat.engines.trino.reading import METASTORE_PLACEHOLDER, TrinoReading

if TYPE_CHECKING:
    from lakecompat.engines.trino.reader import TrinoEngine

#: The catalog of the Hudi connector.
HUDI_CATALOG = "hudi"
#: The Hudi catalog whose Parquet reader ignores statistics: no row-group, column-index or
#: bloom-filter pruning (`TrinoHudi.pushdown_off`).
NO_PUSHDOWN = "hudi_pushdown_off"
#: The Hudi connector's catalog property matching Parquet columns by name (the session
#: property `<catalog>.use_parquet_column_names` overrides it per query).
COLUMN_NAMES = "hudi.parquet.use-column-names"
_NO_TIME_TRAVEL = "Trino's Hudi connector has no time travel; `FOR VERSION AS OF` tried"


class TrinoHudi(TrinoReading):
    """The Hudi connector: snapshots of copy-on-write tables, merge-on-read tables' base files."""

    format = "hudi"
    connector = "hudi"
    connector_note = f"{COLUMN_NAMES}=true unless set: Trino's default"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot",),
        "mor": ("read_optimized",),
    }
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
        Variant("column_names", {CATALOG: HUDI_CATALOG, "hudi.use_parquet_column_names": "true"}),
        Variant(
            "column_positions", {CATALOG: HUDI_CATALOG, "hudi.use_parquet_column_names": "false"}
        ),
        # Through the Hive connector, which hands Hudi tables to the hudi catalog.
        Variant("hive_catalog", {CATALOG: HIVE_CATALOG}),
    )
    # By position rather than by name (the Hive connector hands tables to the same reader).
    matching_variants = ("column_positions",)

    @classmethod
    def add_catalogs(
        cls, files: dict[str, dict[str, str]], metastore_uri: str, pushdown_off: bool
    ) -> None:
        """The Hudi connector, the Hive connector redirecting Hudi tables to it and (with
        `pushdown_off`) the Hudi catalog that ignores Parquet statistics."""
        shared = shared_properties(metastore_uri)
        files[HUDI_CATALOG] = {"connector.name": cls.connector, **shared}
        if pushdown_off:
            # The Hudi connector of Trino 483 has no session property that turns pushdown off:
            # Parquet's generic reader property does, per catalog.
            files[NO_PUSHDOWN] = {
                "connector.name": cls.connector,
                **shared,
                "parquet.ignore-statistics": "true",
            }
        hive = files.setdefault(HIVE_CATALOG, hive_catalog(metastore_uri))
        hive["hive.hudi-catalog-name"] = HUDI_CATALOG

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """The variant in the Hudi catalog that ignores Parquet statistics (`NO_PUSHDOWN`), its
        session properties renamed to that catalog; None for a variant in another catalog."""
        settings = dict(variant.settings)
        if settings.pop(CATALOG, HUDI_CATALOG) != HUDI_CATALOG:
            return None
        moved = {
            (
                f"{NO_PUSHDOWN}.{key.removeprefix('hudi.')}" if key.startswith("hudi.") else key
            ): value
            for key, value in settings.items()
        }
        return Variant(variant.name + PUSHDOWN_OFF, {CATALOG: NO_PUSHDOWN, **moved})

    @classmethod
    def register(cls, engine: TrinoEngine, table: TableRef) -> None:
        """As Hudi's hive sync registers it, in the run's Metastore."""
        engine.context.register_in_metastore(table)

    @classmethod
    def read_sql(cls, engine: TrinoEngine, table: TableRef, query_type: str) -> str:
        """The Metastore table of the query type (`_ro`, `_rt` for merge-on-read); time
        travel `FOR VERSION AS OF` the reference commit."""
        name = quote(table_for(table, query_type))
        if query_type == "time_travel":
            return f"SELECT * FROM {name} FOR VERSION AS OF {reference_instant(table)[0]}"
        return f"SELECT * FROM {name}"

    @classmethod
    def reproduction(
        cls,
        engine: TrinoEngine,
        table: TableRef,
        query_type: str,
        variant: Variant,
        shape: Shape = ALL,
    ) -> dict[str, str]:
        """The catalog files (on a Metastore that has the table registered as Hive sync does:
        see `register.hql`) and the query with its session properties."""
        found: dict[str, dict[str, str]] = {}
        cls.add_catalogs(found, METASTORE_PLACEHOLDER, pushdown_off=True)
        files = {
            f"etc/catalog/{name}.properties": "".join(f"{k}={v}\n" for k, v in props.items())
            for name, props in found.items()
        }
        files["reader.sql"] = engine.reader_sql(table, query_type, variant, shape)
        files["register.hql"] = "".join(f"{statement};\n" for statement in registration_ddl(table))
        return files
