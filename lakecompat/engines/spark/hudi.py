"""How Spark reads Hudi tables: Hudi's Spark datasource, queried through temporary views, in
the writer's session, or in a Spark of its own (a large run, or another Hudi release)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.reading import Reading, Variant
from lakecompat.engines.shape import DATA_SKIPPING_OFF, PUSHDOWN_OFF
from lakecompat.engines.spark.runtime import SESSION_SETTINGS, FormatJars
from lakecompat.engines.table import TableRef, reference_instant

if TYPE_CHECKING:
    from lakecompat.engines.spark.reader import SparkEngine, SparkReader

#: What turns a Spark read's filter pushdown off: Spark's Parquet filters, which parquet-mr
#: applies to row-group statistics, dictionaries and bloom filters (Hudi's data skipping stays).
NO_PUSHDOWN = {"spark.sql.parquet.filterPushdown": "false"}
#: What turns Hudi's data skipping off (the files its column statistics index rules out are
#: read), and nothing else: the other control of a filter, so that a failure can be put down to
#: the one that reads right.
NO_DATA_SKIPPING = {"hoodie.enable.data.skipping": "false"}


class SparkHudi(Reading):
    """Hudi's Spark datasource, each read a temporary view with Hudi's read options."""

    format = "hudi"
    query_types = HUDI.query_types  # every query type of the format
    variants = (
        Variant("schema_on_read", {"hoodie.schema.on.read.enable": "true"}),
        Variant("schema_on_read_off", {"hoodie.schema.on.read.enable": "false"}),
    )
    # Hudi's own default: schema on read is off unless a user turns it on.
    default_variant = "schema_on_read_off"
    # Schema on read matches old files' columns by Hudi's field ids, not by name.
    matching_variants = ("schema_on_read",)

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """No Parquet filter pushdown (statistics, dictionaries, bloom filters); Hudi's data
        skipping as in `variant`."""
        return Variant(variant.name + PUSHDOWN_OFF, {**variant.settings, **NO_PUSHDOWN})

    @classmethod
    def filter_controls(cls, variant: Variant) -> list[Variant]:
        """Parquet filter pushdown off (`+pushdown_off`), and Hudi's data skipping off
        (`+data_skipping_off`): each turns one of the two off, so that the one that reads
        right names the path that lost the rows."""
        skipping = {**variant.settings, **NO_DATA_SKIPPING}
        return [
            *super().filter_controls(variant),
            Variant(variant.name + DATA_SKIPPING_OFF, skipping),
        ]

    @staticmethod
    def read_sql(table: TableRef, query_type: str) -> str:
        """A temporary view of the table's folder with the query type's read options, and a
        `SELECT` from it."""
        view = f"{table.name}_{query_type}"
        options = {"path": str(table.path), "hoodie.datasource.query.type": query_type}
        if query_type in ("incremental", "time_travel"):
            requested, completed = reference_instant(table)
            if query_type == "incremental":
                options["hoodie.datasource.read.begin.instanttime"] = completed
            else:
                options["hoodie.datasource.query.type"] = "snapshot"
                options["as.of.instant"] = requested
        spelled = ", ".join(f"'{key}' '{value}'" for key, value in options.items())
        return (
            f"CREATE OR REPLACE TEMPORARY VIEW `{view}` USING hudi OPTIONS ({spelled});\n"
            f"SELECT * FROM `{view}`"
        )

    @staticmethod
    def spark(engine: SparkEngine) -> SparkReader:
        """The reader's own Spark process where it has one, else the writer's session."""
        return engine.remote or engine.context.spark

    @staticmethod
    def start(engine: SparkEngine) -> None:
        """The reader's own process; or the writer's session, which starts in the run's
        thread (PySpark's gateway belongs there)."""
        if engine.remote is not None:
            engine.remote.start()
        else:
            engine.context.spark.session()

    @staticmethod
    def session(engine: SparkEngine) -> FormatJars:
        """The jar and session settings a spark-sql user starts this Spark with."""
        release = engine.hudi_version
        return FormatJars(f"Hudi {release}", "", (hudi_bundle(release),), SESSION_SETTINGS)
