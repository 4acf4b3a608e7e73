"""What the writers of formats whose jars run in a Spark process of their own share (Iceberg's
and Delta's): the run's side of the writer, which sends each table to that process, start to
finish, and takes the result back. The steps of one table, written there, are each format's
own (`write_table` in its `writer.py`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lakecompat.engines.formats import format_named
from lakecompat.engines.spark.process import SparkProcess
from lakecompat.engines.spark.runtime import FormatJars, SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.writer.base import T, TableWriter, WriteResult
from lakecompat.harness.writer.spark_sql import write_plain_parquet


class SparkProcessWriter(TableWriter):
    """Writes each scenario × table type into a table of its own below `tables_dir`, in a
    Spark process that loads the format's jars (`jars`) instead of Hudi's bundle."""

    #: The table's metadata names files by absolute path (Iceberg), or its time travel by
    #: timestamp goes by its commit files' times (Delta): the table cache keeps such a table
    #: where it was written.
    relocatable = False

    def __init__(
        self,
        runtime: SparkRuntime,
        tables_dir: Path,
        step_timeout: float = 0,
        table_version: str | None = None,
        release: str | None = None,
    ) -> None:
        super().__init__(tables_dir, step_timeout)
        kind = format_named(self.format)
        #: The format's release whose Spark jars write the tables.
        self.release = release or kind.default_release
        #: The format's version option every table is written with (`TableFormat.
        #: version_option`: Iceberg's format version, Delta's column mapping mode).
        self.version = table_version or kind.default_version
        jars = self.jars(self.release)
        #: The Spark release that writes: the run's own, unless the format's jars of this
        #: release run on another (Delta 4 on Spark 4).
        self._spark_version = jars.pyspark or runtime.spark_version
        self._spark = SparkProcess(
            runtime.hudi_version,
            runtime.log_dir,
            runtime.master,
            quick_jit=runtime.quick_jit,  # a small run's writer (the runner decides)
            loads=jars,
        )

    @classmethod
    @abstractmethod
    def jars(cls, release: str) -> FormatJars:
        """The format's jars and session settings of `release`."""

    @staticmethod
    @abstractmethod
    def table_function() -> Callable[..., WriteResult]:
        """The module-level function that writes one table in the Spark process:
        `fn(runtime, tables_dir, step_timeout, scenario, table_type, version)`."""

    def write(self, scenario: sc.Scenario, table_type: str) -> WriteResult:
        """Create the table from the seed rows, then run every step (in Spark's process)."""
        name = sc.table_name(scenario.id, table_type)
        table = TableRef(name, self.tables_dir / name, table_type, scenario.spec.key, self.format)
        reason = self.not_applicable(scenario)
        if reason:
            title = format_named(self.format).title
            raise ValueError(f"scenario {scenario.id} has no {title} table: {reason}")
        arguments = (self.tables_dir, self.step_timeout, scenario, table_type, self.version)
        try:
            return self._spark.call(self.table_function(), *arguments)
        except RuntimeError as exc:
            failed = WriteResult(table, sql=[], step_seconds=[], instants=[])
            return replace(failed, failed_at="the seed rows", message=str(exc), crashed=True)

    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        """A plain Parquet table (no table format), for the engines' control check."""
        return self._spark.call(write_plain_parquet, self.tables_dir, name, schema, rows, key)

    def in_spark(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(runtime, *args)` in this writer's Spark process, where the format's jars are
        loaded."""
        return self._spark.call(fn, *args)

    def prepare(self, scenarios: list[sc.Scenario]) -> None:
        """Start Spark's process, so that it warms up while the run goes on."""
        if scenarios:
            self._spark.start()

    def close(self) -> None:
        """Stop Spark's process."""
        self._spark.stop()
