"""How Spark reads Iceberg tables: Iceberg's Spark catalog over the tables' folder, in a Spark
of its own with Iceberg's runtime (one JVM cannot load both Hudi's bundle and it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakecompat.engines.formats.iceberg import ICEBERG
from lakecompat.engines.infra.iceberg_jars import iceberg_spark_runtime
from lakecompat.engines.reading import Reading
from lakecompat.engines.spark.runtime import (
    ICEBERG_SESSION_SETTINGS,
    FormatJars,
    iceberg_catalog_name,
    iceberg_catalog_settings,
)
from lakecompat.engines.table import FORMAT_QUERY_TYPES, TableRef, reference_instant, reference_time

if TYPE_CHECKING:
    from lakecompat.engines.spark.reader import SparkEngine, SparkReader


#: The name of the logs of the Spark that reads Iceberg tables.
READER_LABEL = "spark-iceberg-reader"


def iceberg_jars(release: str, label: str = "") -> FormatJars:
    """Iceberg's Spark runtime of `release` and its session settings (logs `label`, by default
    `spark-iceberg-<release>`)."""
    return FormatJars(
        f"Iceberg {release}",
        label or f"spark-iceberg-{release}",
        (iceberg_spark_runtime(release),),
        ICEBERG_SESSION_SETTINGS,
    )


class SparkIceberg(Reading):
    """Iceberg's Spark catalog: every query type of the format."""

    format = "iceberg"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = FORMAT_QUERY_TYPES["iceberg"]

    @staticmethod
    def read_sql(table: TableRef, query_type: str) -> str:
        """The read of an Iceberg table as a user of spark-sql writes it: the Hadoop catalog
        of the table's folder (`SET`s, which the session keeps), then `SELECT` from the table;
        time travel as of the reference snapshot (`VERSION AS OF <snapshot id>`) or a moment
        after it (`TIMESTAMP AS OF`, in the session's time zone, UTC). The incremental read is
        a view of the table's folder with Iceberg's `start-snapshot-id` read option (the
        appends after the reference snapshot), the way Spark SQL passes read options. The
        changelog read is the view Iceberg's `create_changelog_view` procedure makes of the
        snapshots after the reference (it leaves out the rows a copy-on-write rewrite carried
        over unchanged)."""
        if query_type == "incremental":
            view = f"{table.name}_incremental"
            options = {"path": str(table.path), "start-snapshot-id": reference_instant(table)[1]}
            spelled = ", ".join(f"'{key}' '{value}'" for key, value in options.items())
            return (
                f"CREATE OR REPLACE TEMPORARY VIEW `{view}` USING iceberg OPTIONS ({spelled});\n"
                f"SELECT * FROM `{view}`"
            )
        warehouse = table.path.parent.parent
        catalog = iceberg_catalog_name(warehouse)
        sets = "".join(
            f"SET {key}={value};\n"
            for key, value in iceberg_catalog_settings(catalog, warehouse).items()
        )
        if query_type == "changelog":
            view = f"{table.name}_changes"
            start = reference_instant(table)[1]
            call = (
                f"CALL {catalog}.system.create_changelog_view(table => "
                f"'{table.path.parent.name}.{table.name}', options => map('start-snapshot-id', "
                f"'{start}'), changelog_view => '{view}')"
            )
            return f"{sets}{call};\nSELECT * FROM `{view}`"
        select = f"SELECT * FROM {catalog}.`{table.path.parent.name}`.`{table.name}`"
        if query_type == "time_travel":
            select += f" VERSION AS OF {reference_instant(table)[1]}"
        elif query_type == "time_travel_timestamp":
            select += f" TIMESTAMP AS OF '{reference_time(table)}'"
        return sets + select

    @staticmethod
    def spark(engine: SparkEngine) -> SparkReader:
        """The Spark with Iceberg's runtime (`spark-iceberg-reader.log`)."""
        return engine.format_spark(iceberg_jars(engine.reads_with(ICEBERG.name), READER_LABEL))

    @classmethod
    def start(cls, engine: SparkEngine) -> None:
        cls.spark(engine).start()

    @staticmethod
    def session(engine: SparkEngine) -> FormatJars:
        """The jar and session settings a spark-sql user starts this Spark with."""
        return iceberg_jars(engine.reads_with(ICEBERG.name))
