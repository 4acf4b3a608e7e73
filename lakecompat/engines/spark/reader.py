"""Spark as a reader: each table format through its reading part (`hudi.py`: Hudi's Spark
datasource in the writer's session or a Spark of its own; `iceberg.py`: Iceberg's Spark
catalog, and `delta.py`: Delta's Spark reader, each in a Spark of its own, since one JVM cannot
load two formats' jars)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from lakecompat.engines.answers import arrow_type, canonical_json
from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.infra.artifacts import fetch
from lakecompat.engines.infra.containers.runtime import containers_wanted
from lakecompat.engines.infra.containers.spark_submit import where_spark_runs
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.infra.jdk import find_jdk
from lakecompat.engines.releases import Releases
from lakecompat.engines.settings import SettingsScope
from lakecompat.engines.shape import ALL, SPARK, Shape
from lakecompat.engines.spark.delta import SparkDelta
from lakecompat.engines.spark.hudi import SparkHudi
from lakecompat.engines.spark.iceberg import SparkIceberg
from lakecompat.engines.spark.process import SparkProcess
from lakecompat.engines.spark.runtime import SPARK_JAVA_VERSIONS, FormatJars, SparkRuntime
from lakecompat.engines.spark.settings import HELP, check_spark_settings
from lakecompat.engines.table import TableRef

#: A Spark that reads: the writer's session, or a Spark process of its own.
SparkReader = SparkProcess | SparkRuntime
#: The reading part of each table format Spark reads.
SparkReading = type[SparkHudi] | type[SparkIceberg] | type[SparkDelta]


def dataframe_to_arrow(df: Any) -> pa.Table:
    """Collect a Spark DataFrame into Arrow with the types Spark reported for it."""
    fields = []
    for spark_field in df.schema.fields:
        mapped = arrow_type(spark_field.dataType.simpleString())
        fields.append(pa.field(spark_field.name, mapped or pa.string()))
    schema = pa.schema(fields)
    rows = df.collect()
    nested = [f.dataType.typeName() in ("struct", "array", "map") for f in df.schema.fields]
    columns = []
    for index, arrow_field in enumerate(schema):
        values = [row[index] for row in rows]
        if nested[index]:
            values = [canonical_json(_plain(v)) for v in values]
        elif arrow_field.type == pa.string():
            values = [None if v is None else str(v) for v in values]
        elif arrow_field.type == pa.timestamp("us", tz="UTC"):
            # PySpark hands TIMESTAMP values over as naive datetimes in the process's zone.
            values = [None if v is None else v.astimezone(dt.UTC) for v in values]
        elif arrow_field.type == pa.binary():
            values = [None if v is None else bytes(v) for v in values]
        columns.append(pa.array(values, type=arrow_field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _plain(value: Any) -> Any:
    """Spark rows, lists and dicts as plain Python values (rows become dicts)."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


#: What Hudi 0.x's Spark reader leaves in the Spark context's Hadoop configuration after a read
#: with schema on read (the table's evolved schema, its path and its commits), and reads again
#: in every later read, of any table: a read of another table without schema on read then
#: prunes its columns against this table's schema ("cannot prune col: ... does not exist in
#: hudi table"). Cleared before each read, so that a cell's answer is its own table's, whatever
#: was read before (docs/research/versions.md).
HUDI_SCHEMA_EVOLUTION_KEYS = (
    "hoodie.schema.internal.querySchema",
    "hoodie.tablePath",
    "hoodie.valid.commits.list",
)


def run_query(spark: Any, sql: str, settings: dict[str, str]) -> pa.Table:
    """Run a reader's statements (`;\n`-separated, the last a SELECT) with `settings` set for
    them only, and collect the answer; Hudi's schema-evolution state from earlier reads is
    cleared first (`HUDI_SCHEMA_EVOLUTION_KEYS`)."""
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key in HUDI_SCHEMA_EVOLUTION_KEYS:
        hadoop_conf.unset(key)
    previous = {k: spark.conf.get(k, None) for k in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        *setup, select = [s.strip() for s in sql.split(";\n") if s.strip()]
        for statement in setup:
            spark.sql(statement)
        return dataframe_to_arrow(spark.sql(select))
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def query_in(runtime: SparkRuntime, sql: str, settings: dict[str, str]) -> pa.Table:
    """`run_query` in `runtime`'s session: what a Spark process of another Hudi release runs."""
    return run_query(runtime.session(), sql, settings)


#: The name of the logs of a Spark that reads in a process of its own with the writer's release.
READER_LABEL = "spark-reader"


class SparkEngine(Engine):
    """Spark 3.5 with each format's jars: Hudi's bundle in the writer's session (in a large
    run, and with another Hudi release, a Spark of its own), Iceberg's runtime and Delta's
    jars each in a Spark of its own."""

    name = "spark"
    dialect = SPARK
    display_name = "Spark"
    trackers = ("apache/spark",)
    readings = (SparkHudi, SparkIceberg, SparkDelta)
    # A large run reads in a Spark of its own, beside the writer: its reads then no longer take
    # turns with the writes. Otherwise the writer's session reads (its variants set session
    # configuration, for the read only: the writer's jobs do not see them).
    apart_in_lanes = True

    settings_help = HELP

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        return check_spark_settings(settings, scope)

    carries: ClassVar[dict[str, str]] = {
        HUDI.name: "the Hudi release the Spark reader reads with, when it is not the writer's "
        "(version skew: e.g. the writer on 1.2.0, a Spark job still on 0.15.0); it runs in a "
        "Spark of its own"
    }

    @classmethod
    def provision(cls, releases: Releases) -> None:
        carried = releases.carried_by(cls.name).get(HUDI.name)
        if carried:
            fetch(hudi_bundle(carried))

    _remote: SparkProcess | None = None
    #: The Sparks of the formats whose jars are not Hudi's, by their logs' name.
    _format_sparks: dict[str, SparkProcess] | None = None
    #: The Spark that ran the last query: a timeout's kill, the liveness check and the log
    #: concern it (None: none ran yet; the Spark of the run's first format then).
    _reading: SparkReader | None = None

    @property
    def version(self) -> str:
        return self.context.spark.spark_version

    def version_reading(self, table_format: str) -> str:
        """Spark's release that reads `table_format`'s tables: lakecompat's own unless the
        format's jars run on another (Delta 4 on Spark 4)."""
        return self._part(table_format).session(self).pyspark or self.version

    def runs_in(self, table_format: str = "") -> str:
        """Spark's JVMs run in a container with `--containers` (PySpark starts them through
        `containers.spark_submit`), except Spark 4's (a format's Python environment of its own
        starts its JVM itself)."""
        if not containers_wanted() or (
            table_format and self.version_reading(table_format) != self.version
        ):
            return "process"
        return where_spark_runs(find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5").home)

    @property
    def hudi_version(self) -> str:
        """The Hudi release this Spark reads Hudi tables with."""
        return self.carried.get(HUDI.name) or self.context.spark.hudi_version

    @property
    def java(self) -> str:
        return find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5").describe()

    @property
    def remote(self) -> SparkProcess | None:
        """Spark in a process of its own: with the reader's own Hudi release when that release
        is not the writer's (version skew), or with the writer's release in a large run
        (`apart`, logs `spark-reader.log`); None: the writer's session reads."""
        skewed = self.hudi_version != self.context.spark.hudi_version
        if not skewed and not self.apart:
            return None
        if self._remote is None:
            master = self.context.spark.master
            label = None if skewed else READER_LABEL
            self._remote = SparkProcess(
                self.hudi_version, self.context.log_dir, master, label, quick_jit=True
            )
        return self._remote

    @property
    def shares_writer(self) -> bool:  # type: ignore[override]
        """Whether the writer's session reads (no Spark of the reader's own)."""
        return self.remote is None

    def format_spark(self, jars: FormatJars) -> SparkProcess:
        """The Spark that reads a format whose jars are not Hudi's (Iceberg's, Delta's): a
        process of its own with `jars` (the release the reader reads with), logs
        `<jars.label>.log`, started once per run."""
        if self._format_sparks is None:
            self._format_sparks = {}
        if jars.label not in self._format_sparks:
            self._format_sparks[jars.label] = SparkProcess(
                self.context.spark.hudi_version,
                self.context.log_dir,
                self.context.spark.master,
                jars.label,
                quick_jit=True,
                loads=jars,
            )
        return self._format_sparks[jars.label]

    def _part(self, table_format: str) -> SparkReading:
        """The reading part of `table_format`; a plain Parquet table is read by the Spark of
        the run's first format that Spark reads."""
        if table_format not in self.formats:
            table_format = next((f for f in self.context.formats if f in self.formats), "hudi")
        return self.reading(table_format)  # type: ignore[return-value]

    def _spark(self) -> SparkReader:
        """The Spark that ran the last query (before any: the one of the run's first format)."""
        if self._reading is None:
            return self._part("parquet").spark(self)
        return self._reading

    def start(self) -> None:
        # A run of Iceberg tables alone never starts the writer's Hudi session: they are
        # written and read in processes of their own.
        for table_format in self.formats:
            if table_format in self.context.formats:
                self._part(table_format).start(self)

    def stop(self) -> None:
        if self.remote is not None:
            self.remote.stop()
        for spark in (self._format_sparks or {}).values():
            spark.stop()

    def alive(self) -> bool:
        return self._spark().alive()

    def kill(self) -> None:
        self._spark().kill()

    def restart(self) -> None:
        self._spark().restart()

    def read_sql(self, table: TableRef, query_type: str) -> str:
        if table.format == "parquet":
            return f"SELECT * FROM parquet.`{table.path}`"
        return self._part(table.format).read_sql(table, query_type)

    def query_table(self, table: TableRef, sql: str, variant: Variant) -> pa.Table:
        """In the Spark of the table's format."""
        return self._ask(self._part(table.format).spark(self), sql, variant)

    def query(self, sql: str, variant: Variant) -> pa.Table:
        """In the Spark of the run's first format that Spark reads (the control check's
        Parquet table)."""
        return self._ask(self._part("parquet").spark(self), sql, variant)

    def _ask(self, spark: SparkReader, sql: str, variant: Variant) -> pa.Table:
        self._reading = spark
        if isinstance(spark, SparkRuntime):
            return run_query(spark.session(), sql, variant.settings)
        return spark.call(query_in, sql, dict(variant.settings))

    def evidence_sql(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> str:
        """For spark-sql: the session's configuration as its command line (a comment), the
        variant's settings as SETs, then the read."""
        return self._command_line(table) + super().evidence_sql(table, query_type, variant, shape)

    def reproduction(
        self, table: TableRef, query_type: str, variant: Variant, shape: Shape = ALL
    ) -> dict[str, str]:
        """`reader.sql`, its first line the spark-sql command that runs it (the table
        format's jar and session settings)."""
        files = super().reproduction(table, query_type, variant, shape)
        return {**files, "reader.sql": self._command_line(table) + files["reader.sql"]}

    def _command_line(self, table: TableRef) -> str:
        """The spark-sql command line of the session that reads `table`, as a comment."""
        jars = self._part(table.format).session(self)
        confs = " ".join(f"--conf {key}={value}" for key, value in jars.settings.items())
        version = self.version_reading(table.format)
        return f"-- Spark {version}: spark-sql --packages {jars.packages()} {confs}\n"

    @property
    def log_path(self) -> Path:
        return self._spark().log_path
