"""The writer: creates a Hudi table with Spark and runs a scenario's steps against it.

Data steps are DataFrame writes through Hudi's datasource; schema changes are Spark SQL DDL
with `hoodie.schema.on.read.enable=true`. A refused schema change is a result (`REJECTED`).

Hudi 1.1+ refuses `RENAME COLUMN` and `DROP COLUMN` under its shipped defaults
(https://github.com/apache/hudi/issues/19766): the ALTER command validates the new schema as if
it were an incoming write. The documented workaround,
`hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true`, is set for the DDL
statement only, so that DataFrame writes keep Hudi's default checks.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.spark.process import SparkProcess
from lakecompat.engines.spark.runtime import SESSION_SETTINGS, SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, evolve, reference_index, schema_of
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.scenario.types import coerce
from lakecompat.harness.writer import layout as file_layout
from lakecompat.harness.writer.base import DataFile, T, TableWriter, WriteResult
from lakecompat.harness.writer.hudi.files import live_files
from lakecompat.harness.writer.hudi.script import writer_script
from lakecompat.harness.writer.hudi.statements import (
    COMPACTION_SETTINGS,
    DDL_SETTINGS,
    WRITE_SETTINGS,
    bloom_filter_settings,
    clustering_statement,
    compaction_statement,
    ddl,
    describe_write,
    quote,
    seed_settings,
    version_settings,
    write_options,
)
from lakecompat.harness.writer.hudi.timeline import (
    completed_as_now,
    latest_instant,
    listing_statements,
    partition_folders,
    table_version,
)
from lakecompat.harness.writer.spark_sql import (
    dataframe,
    inspect_files,
    run_step,
    spark_columns,
    write_plain_parquet,
)


def write_part(
    runtime: SparkRuntime,
    tables_dir: Path,
    step_timeout: float,
    scenario: sc.Scenario,
    table_type: str,
    stop: int,
) -> WriteResult:
    """The seed rows and the steps before `steps[stop - 1]`, written with `runtime`: what the
    Spark process of an older Hudi release runs for an `upgrade_writer` scenario."""
    return HudiWriter(runtime, tables_dir, step_timeout).write(scenario, table_type, stop=stop)


#: The read option that reads a table's columns by Hudi's field ids (`HudiWriter.read_back`).
SCHEMA_ON_READ = "hoodie.schema.on.read.enable"


class HudiWriter(TableWriter):
    """Writes each scenario × table type into a Hudi table of its own below `tables_dir`, with
    the run's Spark (and, for `upgrade_writer` scenarios, Spark with the older release)."""

    format = "hudi"
    writes_in_run_session = True

    def __init__(
        self,
        runtime: SparkRuntime,
        tables_dir: Path,
        step_timeout: float = 0,
        table_version: str | None = None,
        release: str | None = None,
    ) -> None:
        """`release`: the Hudi release to write with, which must be the one the run's Spark
        session (`runtime`) loads (None: that one)."""
        super().__init__(tables_dir, step_timeout)
        if release is not None and release != runtime.hudi_version:
            raise ValueError(
                f"the Hudi writer writes in the run's Spark session, which loads Hudi "
                f"{runtime.hudi_version}, not {release}"
            )
        self.runtime = runtime
        #: The table version every write asks for (`hoodie.write.table.version`, e.g. 6 for
        #: readers of Hudi 0.14/0.15); None: the release's own.
        self.table_version = table_version
        self._older_writers: dict[str, SparkProcess] = {}

    @classmethod
    def not_applicable(cls, scenario: sc.Scenario) -> str | None:
        """Why the scenario has no Hudi table (a step only Iceberg has, or another format's
        writer options), or None."""
        for index, step in enumerate(scenario.spec.steps):
            if step.op in sc.PARTITION_OPS:
                return (
                    f"steps[{index}] ({step.op}) is Iceberg's partition evolution; a Hudi "
                    "table's partition fields are fixed when it is created"
                )
            others = sorted(
                k for k in getattr(step, "settings", {}) if sc.settings_format(k) != HUDI
            )
            if others:
                options = ", ".join(others)
                return (
                    f"steps[{index}] ({step.op}) sets another format's writer options ({options})"
                )
        return None

    @property
    def versions(self) -> dict[str, str]:
        """Spark's and Hudi's releases, and the table version where the run chose one."""
        versions = {"spark": self.runtime.spark_version, "hudi": self.runtime.hudi_version}
        if self.table_version:
            versions["table_version"] = self.table_version
        return versions

    @property
    def settings(self) -> dict[str, Any]:
        """Spark's session settings and the Hudi settings of writes, DDL and compaction."""
        return {
            "session": SESSION_SETTINGS,
            "write": WRITE_SETTINGS,
            "ddl": DDL_SETTINGS,
            "compaction": COMPACTION_SETTINGS,
        }

    def table_settings(self, scenario: sc.Scenario) -> dict[str, Any]:
        """The Hadoop settings that write the scenario's Parquet bloom filters."""
        return {"hadoop": bloom_filter_settings(scenario.spec)}

    def write(self, scenario: sc.Scenario, table_type: str, stop: int | None = None) -> WriteResult:
        """Create the table from the seed rows, then run every step; stop at the first failure.

        With an `upgrade_writer` step whose older release is not this writer's, that release
        writes the seed rows and the steps before it (in a process of its own), and this writer
        goes on from there. `stop` ends the writing before `steps[stop - 1]` (how the older
        release is asked for its part), without inspecting the table.
        """
        spec = scenario.spec
        name = sc.table_name(scenario.id, table_type)
        table = TableRef(name, self.tables_dir / name, table_type, spec.key)
        states = evolve(spec)
        steps: list[Any] = [sc.Insert(op="insert", rows=spec.rows), *spec.steps]
        done = WriteResult(table, sql=[], step_seconds=[], instants=[])
        upgrade = spec.upgrade
        mine = self.runtime.hudi_version
        older = self._older_release(spec)
        if stop is None and upgrade and older:
            start = upgrade[0] + 1
            try:
                arguments = (self.tables_dir, self.step_timeout, scenario, table_type, start)
                done = self._older(older).call(write_part, *arguments)
            except RuntimeError as exc:
                return replace(done, failed_at="the seed rows", message=str(exc), crashed=True)
            if not done.ok:  # say which release stopped
                return replace(done, message=f"Hudi {older}: {done.message}")
            history = (
                f"Hudi {older} wrote the steps before steps[{upgrade[0]}] (table "
                f"version {table_version(table.path)}); Hudi {mine} wrote the rest"
            )
        else:
            history = f"upgrade_writer: none, the writer is on Hudi {mine} already"
            start = 0
            if table.path.exists():
                shutil.rmtree(table.path)
        with self._bloom_filters(spec):
            indices = range(start, stop or len(steps))
            failed = self._run_steps(table, spec, steps, states, indices, done)
        if failed is not None or stop is not None:
            return failed or done
        done.instants = completed_as_now(table.path, done.instants)
        table = replace(
            table,
            columns=self._latest_columns(table),
            reference_instant=done.instants[reference_index(spec)],
            partition_by=tuple(spec.partition_by),
            partitions=partition_folders(table.path, len(spec.partition_by)),
        )
        files = self._inspect(table, spec, done.instants)
        if upgrade:
            file_layout.note(files, history)
        if upgrade or self.table_version:
            file_layout.note(files, f"table version {table_version(table.path)} after the steps")
        if self.table_version and table_version(table.path) != self.table_version:
            # Cells of this table would not say what the run asked about.
            file_layout.unmet(
                files,
                f"the writer was asked for table version {self.table_version} "
                f"(hoodie.write.table.version) and the table has {table_version(table.path)}",
            )
        return replace(done, table=table, files=files)

    @contextmanager
    def _bloom_filters(self, spec: sc.ScenarioSpec) -> Iterator[None]:
        """Parquet bloom filters on the key and the changed columns (`bloom_filter_settings`)
        for every file this table's steps write, set in Spark's Hadoop configuration, which
        Hudi's Parquet writer reads, and taken out again for the next table."""
        settings = bloom_filter_settings(spec)
        conf = self.runtime.hadoop_conf()
        for key, value in settings.items():
            conf.set(key, value)
        try:
            yield
        finally:
            # A Spark that died (or was restarted) took its configuration with it.
            conf = self.runtime.hadoop_conf(start=False)
            for key in settings if conf is not None else ():
                conf.unset(key)

    def _run_steps(
        self,
        table: TableRef,
        spec: sc.ScenarioSpec,
        steps: list[Any],
        states: list[TableState],
        indices: range,
        done: WriteResult,
    ) -> WriteResult | None:
        """Run `steps[i]` for every i of `indices`, recording into `done`; the failed result,
        or None when every step ran."""
        statements, timings, instants = done.sql or [], done.step_seconds, done.instants
        done.sql = statements
        for index in indices:
            step = steps[index]
            started = time.monotonic()
            before = states[max(index - 1, 0)]
            apply = partial(self._apply, table, spec, step, before, statements)
            failed = run_step(self.runtime, self.step_timeout, index, step, apply)
            if failed is not None:
                return replace(done, **failed)
            timings.append(time.monotonic() - started)
            instants.append(latest_instant(table.path))
            if index == 0:
                self._register(table)
        return None

    def _older(self, hudi: str) -> SparkProcess:
        """The Spark process of an older release (started on first use)."""
        if hudi not in self._older_writers:
            self._older_writers[hudi] = SparkProcess(
                hudi, self.runtime.log_dir, self.runtime.master, quick_jit=self.runtime.quick_jit
            )
        return self._older_writers[hudi]

    def script(self, scenario: sc.Scenario, table_type: str) -> str:
        """A PySpark script that writes the same table with this writer's Spark and Hudi."""
        versions = self.versions
        return writer_script(
            scenario, table_type, versions["spark"], versions["hudi"], self.table_version
        )

    @classmethod
    def script_jar(cls, versions: dict[str, str]) -> MavenArtifact:
        """Hudi's Spark bundle of the writer's release."""
        return hudi_bundle(versions["hudi"])

    @classmethod
    def release_words(cls, versions: dict[str, str]) -> str:
        """`Hudi 1.2.0`."""
        return f"Hudi {versions['hudi']}"

    def in_spark(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(runtime, *args)` with the session this writer writes with, in this process."""
        return fn(self.runtime, *args)

    @classmethod
    def read_back(cls, session: Any, path: Path) -> tuple[list[Any], list[Any]]:
        """With schema on read: without it Spark reads a renamed column as NULL from the
        files written before the rename, and two tables would look alike whatever those
        files hold."""
        session.conf.set(SCHEMA_ON_READ, "true")
        try:
            frame = session.read.format("hudi").load(str(path))
            fields = [f for f in frame.schema.fields if not f.name.startswith(HUDI.meta_prefix)]
            return fields, frame.select(*(f.name for f in fields)).collect()
        finally:
            session.conf.unset(SCHEMA_ON_READ)

    def prepare(self, scenarios: list[sc.Scenario]) -> None:
        """Start the writer processes of the older releases these scenarios upgrade from, so
        that their Spark warms up while the run goes on."""
        for scenario in scenarios:
            older = self._older_release(scenario.spec)
            if older:
                self._older(older).start()

    def _older_release(self, spec: sc.ScenarioSpec) -> str | None:
        """The release an `upgrade_writer` step upgrades from, when it is not this writer's."""
        upgrade = spec.upgrade
        if upgrade is None or upgrade[1].from_ == self.runtime.hudi_version:
            return None
        return upgrade[1].from_

    def close(self) -> None:
        """Stop the older releases' writer processes."""
        for older in self._older_writers.values():
            older.stop()
        self._older_writers.clear()

    def _inspect(
        self, table: TableRef, spec: sc.ScenarioSpec, instants: list[tuple[str, str] | None]
    ) -> dict[str, Any]:
        """What the table's live files hold (Hudi lists them, their own headers say the schema)."""

        def listed() -> list[DataFile]:
            rows = []
            for statement in listing_statements(table, self.runtime.hudi_version):
                rows += [row.asDict() for row in self.runtime.session().sql(statement).collect()]
            return live_files(rows, table.path)

        return inspect_files(self.runtime, self.step_timeout, spec, listed, instants)

    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        """A plain Parquet table (no Hudi), for the engines' control check."""
        return write_plain_parquet(self.runtime, self.tables_dir, name, schema, rows, key)

    def _apply(
        self,
        table: TableRef,
        spec: sc.ScenarioSpec,
        step: Any,
        before: TableState,
        statements: list[str],
    ) -> None:
        """Run one step; SQL statements are recorded before they run, as evidence."""
        match step:
            case sc.Insert(rows=rows) if not table.path.exists():
                settings = seed_settings(len(rows))
                statements.append(describe_write("bulk_insert", rows, before.schema, settings))
                frame = dataframe(self.runtime, before.schema, rows, partitions=len(rows))
                options = {**self._options(table, spec, "bulk_insert"), **settings}
                frame.write.format("hudi").options(**options).mode("overwrite").save(
                    str(table.path)
                )
            case sc.Insert(rows=rows, settings=settings):
                statements.append(describe_write("insert", rows, before.schema, settings))
                self._write_rows(table, spec, before.schema, rows, "insert", "append", settings)
            case sc.Upsert(rows=rows, schema_=declared, settings=settings):
                schema = schema_of(declared) if declared else before.schema
                statements.append(describe_write("upsert", rows, schema, settings))
                self._write_rows(table, spec, schema, rows, "upsert", "append", settings)
            case sc.Delete(keys=keys):
                key_type = before.schema.column(spec.key).type
                doomed = [before.rows[coerce(k, key_type)] for k in keys]
                statements.append(describe_write("delete", doomed, before.schema))
                self._write_rows(table, spec, before.schema, doomed, "delete", "append")
            case sc.Compaction() if table.table_type == "mor":
                statement = compaction_statement(str(table.path))
                statements.append(statement)
                self._sql(statement, COMPACTION_SETTINGS)
            case sc.Compaction():
                pass  # copy-on-write tables have nothing to compact
            case sc.UpgradeWriter(from_=older) if older == self.runtime.hudi_version:
                statements.append(f"-- upgrade_writer: none, the writer is on Hudi {older} already")
            case sc.UpgradeWriter(from_=older):
                statements.append(
                    f"-- upgrade_writer: Hudi {older} wrote the steps above (table version "
                    f"{table_version(table.path)}); Hudi {self.runtime.hudi_version} writes the "
                    "steps below"
                )
                self._register(table)  # in this writer's own catalog
            case sc.Clustering():
                statement = clustering_statement(str(table.path))
                statements.append(statement)
                self._sql(statement, {})
            case _:
                statement = ddl(table.name, step)
                statements.append(statement)
                self._sql(statement, DDL_SETTINGS)

    def _write_rows(
        self,
        table: TableRef,
        spec: sc.ScenarioSpec,
        schema: Schema,
        rows: list[dict[str, Any]],
        operation: str,
        mode: str,
        settings: dict[str, str] | None = None,
    ) -> None:
        frame = dataframe(self.runtime, schema, rows)
        options = {**self._options(table, spec, operation), **(settings or {})}
        frame.write.format("hudi").options(**options).mode(mode).save(str(table.path))

    def _options(self, table: TableRef, spec: sc.ScenarioSpec, operation: str) -> dict[str, str]:
        return write_options(table.name, table.table_type, spec, operation, self.table_version)

    def _latest_columns(self, table: TableRef) -> tuple[tuple[str, str], ...]:
        """The columns of the table's latest Hudi schema, as Hive sync would register them."""
        frame = self.runtime.session().read.format("hudi").load(str(table.path))
        return spark_columns(frame)

    def _register(self, table: TableRef) -> None:
        self._sql(f"DROP TABLE IF EXISTS {quote(table.name)}", {})
        self._sql(f"CREATE TABLE {quote(table.name)} USING hudi LOCATION '{table.path}'", {})

    def _sql(self, statement: str, settings: dict[str, str]) -> None:
        session = self.runtime.session()
        settings = {**WRITE_SETTINGS, **version_settings(self.table_version), **settings}
        for key, value in settings.items():
            session.conf.set(key, value)
        try:
            session.sql(statement).collect()
        finally:
            for key in settings:
                session.conf.unset(key)
