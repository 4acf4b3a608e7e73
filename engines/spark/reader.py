"""Spark as a reader: Hudi's Spark datasource, queried through temporary views; Iceberg tables
through Iceberg's Spark catalog, in a Spark of their own (one JVM cannot load both)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from engines.answers import arrow_type, canonical_json
from engines.base import Engine, Variant
from engines.infra.artifacts import fetch
from engines.infra.hudi_jars import hudi_bundle
from engines.infra.iceberg_jars import iceberg_spark_runtime, iceberg_version
from engines.infra.jdk import find_jdk
from engines.settings import SettingsScope
from engines.shape import ALL, DATA_SKIPPING_OFF, PUSHDOWN_OFF, SPARK, Shape
from engines.spark.process import SparkProcess
from engines.spark.runtime import (
    ICEBERG_SESSION_SETTINGS,
    SESSION_SETTINGS,
    SPARK_JAVA_VERSIONS,
    SparkRuntime,
    iceberg_catalog_name,
    iceberg_catalog_settings,
)
from engines.spark.settings import HELP, check_spark_settings
from engines.table import FORMAT_QUERY_TYPES, TableRef, reference_instant, reference_time


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
#: The name of the logs of the Spark that reads Iceberg tables.
ICEBERG_READER_LABEL = "spark-iceberg-reader"

#: What turns a Spark read's filter pushdown off: Spark's Parquet filters, which parquet-mr
#: applies to row-group statistics, dictionaries and bloom filters (Hudi's data skipping stays).
NO_PUSHDOWN = {"spark.sql.parquet.filterPushdown": "false"}
#: What turns Hudi's data skipping off (the files its column statistics index rules out are
#: read), and nothing else: the other control of a filter, so that a failure can be put down to
#: the one that reads right.
NO_DATA_SKIPPING = {"hoodie.enable.data.skipping": "false"}


class SparkEngine(Engine):
    """Spark 3.5 with the Hudi bundle: the writer's session, or in a large run (and with
    another Hudi release) a Spark of its own."""

    name = "spark"
    dialect = SPARK
    display_name = "Spark"
    trackers = ("apache/spark",)
    formats = ("hudi", "iceberg")
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {
        "cow": ("snapshot", "incremental", "time_travel"),
        "mor": ("snapshot", "read_optimized", "incremental", "time_travel"),
    }
    format_query_types: ClassVar[dict[str, dict[str, tuple[str, ...]]]] = {
        "iceberg": FORMAT_QUERY_TYPES["iceberg"]
    }
    variants = (
        Variant("schema_on_read", {"hoodie.schema.on.read.enable": "true"}),
        Variant("schema_on_read_off", {"hoodie.schema.on.read.enable": "false"}),
    )
    # Hudi's own default: schema on read is off unless a user turns it on.
    default_variant = "schema_on_read_off"
    # Schema on read matches old files' columns by Hudi's field ids, not by name.
    matching_variants = ("schema_on_read",)
    # A large run reads in a Spark of its own, beside the writer: its reads then no longer take
    # turns with the writes. Otherwise the writer's session reads (its variants set session
    # configuration, for the read only: the writer's jobs do not see them).
    apart_in_lanes = True

    settings_help = HELP

    @classmethod
    def check_settings(cls, settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
        return check_spark_settings(settings, scope)

    reader_hudi_help = (
        "the Hudi release the Spark reader reads with, when it is not the writer's (version "
        "skew: e.g. the writer on 1.2.0, a Spark job still on 0.15.0); it runs in a Spark of "
        "its own"
    )

    @classmethod
    def provision(cls, hudi: str, reader_hudi: str | None = None) -> None:
        if reader_hudi:
            fetch(hudi_bundle(reader_hudi))

    _remote: SparkProcess | None = None
    _iceberg: SparkProcess | None = None
    #: Whether the last read was of an Iceberg table: a timeout's kill, the liveness check and
    #: the log then concern the Spark that reads Iceberg.
    _on_iceberg = False

    @property
    def version(self) -> str:
        return self.context.spark.spark_version

    @property
    def hudi_version(self) -> str:
        return self.reader_hudi or self.context.spark.hudi_version

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

    @property
    def iceberg(self) -> SparkProcess:
        """The Spark that reads Iceberg tables: a process of its own with Iceberg's runtime
        (the writer's release), logs `spark-iceberg-reader.log`."""
        if self._iceberg is None:
            self._iceberg = SparkProcess(
                self.context.spark.hudi_version,
                self.context.log_dir,
                self.context.spark.master,
                ICEBERG_READER_LABEL,
                quick_jit=True,
                iceberg=iceberg_version(),
            )
        return self._iceberg

    def _spark(self) -> SparkProcess | SparkRuntime:
        """Whichever Spark reads now: Iceberg's, the reader's own process, or the writer's
        session."""
        if self._on_iceberg:
            return self.iceberg
        return self.remote or self.context.spark

    def start(self) -> None:
        # The writer's session starts in the run's thread (PySpark's gateway belongs there):
        # here when it reads Hudi tables, otherwise at the writer's first job (a run of
        # Iceberg tables alone never starts it: they are written and read in processes of
        # their own).
        if self.remote is not None:
            self.remote.start()
        elif "hudi" in self.context.formats:
            self.context.spark.session()
        if "iceberg" in self.context.formats:
            self.iceberg.start()

    def stop(self) -> None:
        if self.remote is not None:
            self.remote.stop()
        if self._iceberg is not None:
            self._iceberg.stop()

    def alive(self) -> bool:
        return self._spark().alive()

    def kill(self) -> None:
        self._spark().kill()

    def restart(self) -> None:
        self._spark().restart()

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

    def read_sql(self, table: TableRef, query_type: str) -> str:
        if table.format == "parquet":
            return f"SELECT * FROM parquet.`{table.path}`"
        if table.format == "iceberg":
            return iceberg_read_sql(table, query_type)
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

    def query_table(self, table: TableRef, sql: str, variant: Variant) -> pa.Table:
        """Iceberg tables are read by the Spark with Iceberg's runtime, the others by the
        Spark with Hudi's bundle."""
        self._on_iceberg = table.format == "iceberg"
        if self._on_iceberg:
            return self.iceberg.call(query_in, sql, dict(variant.settings))
        return self.query(sql, variant)

    def query(self, sql: str, variant: Variant) -> pa.Table:
        if self.remote is not None:
            return self.remote.call(query_in, sql, dict(variant.settings))
        if "hudi" not in self.context.formats:
            # A run of Iceberg tables alone (the control check's Parquet table included) reads
            # with Iceberg's Spark: the writer's Hudi session is never started.
            self._on_iceberg = True
            return self.iceberg.call(query_in, sql, dict(variant.settings))
        return run_query(self.context.spark.session(), sql, variant.settings)

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
        bundle = hudi_bundle(self.hudi_version)
        settings = SESSION_SETTINGS
        if table.format == "iceberg":
            bundle, settings = iceberg_spark_runtime(iceberg_version()), ICEBERG_SESSION_SETTINGS
        confs = " ".join(f"--conf {key}={value}" for key, value in settings.items())
        return (
            f"-- Spark {self.version}: spark-sql --packages "
            f"{bundle.group}:{bundle.artifact}:{bundle.version} {confs}\n"
        )

    @property
    def log_path(self) -> Path:
        return self._spark().log_path


def iceberg_read_sql(table: TableRef, query_type: str) -> str:
    """The read of an Iceberg table as a user of spark-sql writes it: the Hadoop catalog of
    the table's folder (`SET`s, which the session keeps), then `SELECT` from the table; time
    travel as of the reference snapshot (`VERSION AS OF <snapshot id>`) or a moment after it
    (`TIMESTAMP AS OF`, in the session's time zone, UTC). The incremental read is a view of
    the table's folder with Iceberg's `start-snapshot-id` read option (the appends after the
    reference snapshot), the way Spark SQL passes read options. The changelog read is the view
    Iceberg's `create_changelog_view` procedure makes of the snapshots after the reference (it
    leaves out the rows a copy-on-write rewrite carried over unchanged)."""
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
