"""How Spark reads Delta tables: Delta's Spark jars in a Spark of their own (one JVM cannot load
both them and Hudi's bundle), each table by its path (`delta.`<path>``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakecompat.engines.formats.delta import DELTA
from lakecompat.engines.infra.delta_jars import delta_pyspark, delta_spark, delta_storage
from lakecompat.engines.reading import Reading
from lakecompat.engines.spark.runtime import DELTA_SESSION_SETTINGS, FormatJars
from lakecompat.engines.table import (
    CHANGE_ORDINAL,
    CHANGE_TYPE,
    FORMAT_QUERY_TYPES,
    TableRef,
    reference_instant,
    reference_time,
)

if TYPE_CHECKING:
    from lakecompat.engines.spark.reader import SparkEngine, SparkReader


#: The name of the logs of the Spark that reads Delta tables.
READER_LABEL = "spark-delta-reader"


def delta_jars(release: str, label: str = "") -> FormatJars:
    """Delta's Spark jars of `release` and their session settings (logs `label`, by default
    `spark-delta-<release>`); Delta 4 on Spark 4 (`delta_pyspark`)."""
    pyspark = delta_pyspark(release)
    return FormatJars(
        f"Delta {release}" + (f" on Spark {pyspark}" if pyspark else ""),
        label or f"spark-delta-{release}",
        (delta_spark(release), delta_storage(release)),
        DELTA_SESSION_SETTINGS,
        pyspark,
    )


def table_sql(table: TableRef) -> str:
    """A Delta table named by its folder, as Spark SQL names one: delta.`<path>`."""
    return f"delta.`{table.path}`"


class SparkDelta(Reading):
    """Delta's Spark reader: every query type of the format."""

    format = "delta"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = FORMAT_QUERY_TYPES["delta"]

    @staticmethod
    def read_sql(table: TableRef, query_type: str) -> str:
        """The read of a Delta table as a user of spark-sql writes it: `SELECT` from the
        table's path; time travel as of the reference version (`VERSION AS OF`) or a moment
        after its commit (`TIMESTAMP AS OF`, in the session's zone, UTC). The changelog read
        is Delta's change data feed from the version after the reference
        (`table_changes_by_path`), its change types in the oracle's words (an update's pre-
        and post-image are a delete and an insert) and its commit version as an ordinal."""
        version = int(reference_instant(table)[1])
        if query_type == "changelog":
            columns = "".join(f"`{name}`, " for name, _ in table.columns)
            return (
                f"SELECT {columns}CASE {CHANGE_TYPE} "
                "WHEN 'update_preimage' THEN 'DELETE' WHEN 'update_postimage' THEN 'INSERT' "
                f"ELSE upper({CHANGE_TYPE}) END AS {CHANGE_TYPE}, "
                f"CAST(_commit_version - {version + 1} AS INT) AS {CHANGE_ORDINAL} "
                f"FROM table_changes_by_path('{table.path}', {version + 1})"
            )
        select = f"SELECT * FROM {table_sql(table)}"
        if query_type == "time_travel":
            select += f" VERSION AS OF {version}"
        elif query_type == "time_travel_timestamp":
            select += f" TIMESTAMP AS OF '{reference_time(table)}'"
        return select

    @staticmethod
    def spark(engine: SparkEngine) -> SparkReader:
        """The Spark with Delta's jars (`spark-delta-reader.log`)."""
        return engine.format_spark(delta_jars(engine.reads_with(DELTA.name), READER_LABEL))

    @classmethod
    def start(cls, engine: SparkEngine) -> None:
        cls.spark(engine).start()

    @staticmethod
    def session(engine: SparkEngine) -> FormatJars:
        """The jars and session settings a spark-sql user starts this Spark with."""
        return delta_jars(engine.reads_with(DELTA.name))
