"""The Delta writer: creates a Delta table with Spark and delta-spark and runs a scenario's steps
on it.

PySpark keeps one JVM per Python process and the run's own Spark has the Hudi bundle loaded,
so Delta's jars run in a Spark process of their own (`engines.spark.process`): each table is
written there by `write_table`, start to finish, and the result comes back. A table is a
folder, `<tables_dir>/<name>`, named in SQL by its path (delta.`<path>`). Data steps are SQL
over a temporary view of their rows; schema changes are `ALTER TABLE`. A refused schema change
is a result (`REJECTED`): Delta refuses a rename or a drop without column mapping, and a type
change without type widening.

Delta's time travel by timestamp finds a version by its commit file's modification time, which
a copy of the table would not keep: the table cache keeps a Delta table where it was written
(`TableWriter.relocatable`), as it does an Iceberg one.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from lakecompat.engines.formats.delta import DELTA
from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.infra.delta_jars import (
    DEFAULT_COLUMN_MAPPING,
    delta_pyspark,
    delta_spark,
    delta_storage,
)
from lakecompat.engines.spark.delta import delta_jars
from lakecompat.engines.spark.runtime import DELTA_SESSION_SETTINGS, FormatJars, SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, evolve, reference_index, schema_of
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.scenario.types import coerce
from lakecompat.harness.writer import layout as file_layout
from lakecompat.harness.writer.base import WriteResult
from lakecompat.harness.writer.delta.files import (
    committed_states,
    current_version,
    deletes_note,
    live_files,
    moment_after,
    protocol_note,
    replay,
)
from lakecompat.harness.writer.delta.script import delta_script
from lakecompat.harness.writer.delta.statements import (
    AUTO_MERGE,
    SOURCE_VIEW,
    create_statement,
    delete_statement,
    describe_rows,
    insert_statement,
    merge_statement,
    not_applicable,
    table_identifier,
    table_properties,
)
from lakecompat.harness.writer.spark_sql import (
    dataframe,
    ddl,
    inspect_files,
    run_step,
    spark_columns,
)
from lakecompat.harness.writer.sql_writer import SparkProcessWriter


class DeltaWriter(SparkProcessWriter):
    """Writes each scenario × table type into a Delta table of its own below `tables_dir`,
    with Spark and Delta's jars in a process of their own."""

    format = "delta"

    @classmethod
    def jars(cls, release: str) -> FormatJars:
        """Delta's Spark jars of `release`."""
        return delta_jars(release)

    @staticmethod
    def table_function() -> Callable[..., WriteResult]:
        return write_table

    @property
    def versions(self) -> dict[str, str]:
        """Spark's and Delta's releases and the column mapping mode."""
        return {"spark": self._spark_version, "delta": self.release, "column_mapping": self.version}

    @property
    def settings(self) -> dict[str, Any]:
        """Spark's session settings and the column mapping mode."""
        return {"session": DELTA_SESSION_SETTINGS, "column_mapping": self.version}

    def table_settings(self, scenario: sc.Scenario) -> dict[str, Any]:
        """The table properties of each table type (its features depend on the scenario)."""
        return {
            table_type: table_properties(table_type, self.version, scenario.spec)
            for table_type in DELTA.table_types()
        }

    @classmethod
    def not_applicable(cls, scenario: sc.Scenario) -> str | None:
        """Why the scenario has no Delta table (another format's step), or None."""
        return not_applicable(scenario.spec)

    def script(self, scenario: sc.Scenario, table_type: str) -> str:
        """A PySpark script that writes the same table with this writer's Spark and Delta."""
        return delta_script(scenario, table_type, self._spark_version, self.release, self.version)

    @classmethod
    def script_jar(cls, versions: dict[str, str]) -> MavenArtifact:
        """Delta's Spark jar of the writer's release (Maven brings its storage jar along)."""
        return delta_spark(versions["delta"])

    @classmethod
    def script_needs(cls, versions: dict[str, str]) -> tuple[MavenArtifact, ...]:
        """Delta's storage jar, which its Spark jar needs."""
        return (delta_storage(versions["delta"]),)

    @classmethod
    def script_pyspark(cls, versions: dict[str, str]) -> str:
        """Delta 4's scripts run on Spark 4 (`delta_pyspark`)."""
        return delta_pyspark(versions["delta"])

    @classmethod
    def release_words(cls, versions: dict[str, str]) -> str:
        """`Delta 3.3.2 (column mapping name)`."""
        mode = versions.get("column_mapping", DEFAULT_COLUMN_MAPPING)
        return f"Delta {versions['delta']} (column mapping {mode})"

    @classmethod
    def read_back(cls, session: Any, path: Path) -> tuple[list[Any], list[Any]]:
        """By the table's folder (Delta maps columns to their files' columns itself)."""
        frame = session.read.format("delta").load(str(path))
        return list(frame.schema.fields), frame.collect()


def write_table(
    runtime: SparkRuntime,
    tables_dir: Path,
    step_timeout: float,
    scenario: sc.Scenario,
    table_type: str,
    column_mapping: str,
) -> WriteResult:
    """The table of `scenario` × `table_type`, written with `runtime` (Spark with Delta's jars,
    in its own process)."""
    return _Steps(runtime, tables_dir, step_timeout, column_mapping).write(scenario, table_type)


class _Steps:
    """Writes one table in Spark's process: the seed rows, then each step."""

    def __init__(
        self, runtime: SparkRuntime, tables_dir: Path, step_timeout: float, column_mapping: str
    ) -> None:
        self.runtime = runtime
        self.tables_dir = tables_dir
        self.step_timeout = step_timeout
        self.column_mapping = column_mapping

    def write(self, scenario: sc.Scenario, table_type: str) -> WriteResult:
        spec = scenario.spec
        name = sc.table_name(scenario.id, table_type)
        table = TableRef(name, self.tables_dir / name, table_type, spec.key, "delta")
        identifier = table_identifier(table.path)
        states = evolve(spec)
        steps: list[Any] = [sc.Insert(op="insert", rows=spec.rows), *spec.steps]
        done = WriteResult(table, sql=[], step_seconds=[], instants=[])
        statements: list[str] = []
        done.sql = statements
        if table.path.exists():
            shutil.rmtree(table.path)
        for index, step in enumerate(steps):
            started = time.monotonic()
            before = states[max(index - 1, 0)]
            apply = partial(self._apply, identifier, table, spec, step, before, index, statements)
            failed = run_step(self.runtime, self.step_timeout, index, step, apply)
            if failed is not None:
                return replace(done, **failed)
            done.step_seconds.append(time.monotonic() - started)
            done.instants.append(current_version(table.path))
            unapplied = self._unapplied_change(table, step, states[index])
            if unapplied:
                where = f"steps[{index - 1}] ({step.op})"
                return replace(done, failed_at=where, message=unapplied, rejected=True)
        session = self.runtime.session()
        columns = spark_columns(session.read.format("delta").load(str(table.path)))
        reference = reference_index(spec)
        table = replace(
            table,
            columns=columns,
            reference_instant=done.instants[reference],
            reference_time=moment_after(table.path, done.instants, reference),
            committed=committed_states(done.instants, reference),
            partition_by=tuple(spec.partition_by),
        )
        notes: list[str] = []
        files = self._inspect(table, spec, done.instants, notes)
        for line in notes:
            file_layout.note(files, line)
        return replace(done, table=table, files=files)

    def _unapplied_change(self, table: TableRef, step: Any, after: TableState) -> str | None:
        """What a write with a schema of its own left out of the table's schema, or None."""
        if not (isinstance(step, sc.Upsert) and step.schema_ is not None):
            return None
        frame = self.runtime.session().read.format("delta").load(str(table.path))
        names = [f.name for f in frame.schema.fields]
        missing = [name for name in after.schema.names if name not in names]
        if not missing:
            return None
        return (
            f"the write left out column(s) {', '.join(missing)}: MERGE INTO kept the table's "
            f"schema ({', '.join(names)}), and the change was not made"
        )

    def _apply(
        self,
        identifier: str,
        table: TableRef,
        spec: sc.ScenarioSpec,
        step: Any,
        before: TableState,
        index: int,
        statements: list[str],
    ) -> None:
        """Run one step; statements are recorded before they run, as evidence."""
        session = self.runtime.session()
        match step:
            case sc.Insert(rows=rows) if index == 0:
                columns = [(c.name, c.type.spark_sql()) for c in before.schema.columns]
                properties = table_properties(table.table_type, self.column_mapping, spec)
                create = create_statement(identifier, columns, list(spec.partition_by), properties)
                statements.append(create)
                session.sql(create).collect()
                # One Spark partition per row: one data file per row, so that the rows a later
                # step does not touch keep the files written before a schema change.
                frame = dataframe(self.runtime, before.schema, rows, partitions=len(rows))
                statements.append(
                    f"-- DataFrame write.format('delta').mode('append').save({str(table.path)!r})"
                    f", {len(rows)} row(s), one Spark partition per row"
                )
                frame.write.format("delta").mode("append").save(str(table.path))
            case sc.Insert(rows=rows):
                insert = insert_statement(identifier)
                self._with_rows(before.schema, rows, statements, insert, partitions=1)
            case sc.Upsert(rows=rows, schema_=declared):
                schema = schema_of(declared) if declared else before.schema
                merge = merge_statement(identifier, spec.key, spec.write_order)
                self._with_rows(schema, rows, statements, merge, evolve=declared is not None)
            case sc.Delete(keys=keys):
                key_type = before.schema.column(spec.key).type
                doomed = [before.rows[coerce(k, key_type)] for k in keys]
                self._with_rows(
                    before.schema, doomed, statements, delete_statement(identifier, spec.key)
                )
            case _:
                statement = ddl(table.name, step, identifier=identifier)
                statements.append(statement)
                session.sql(statement).collect()

    def _with_rows(
        self,
        schema: Schema,
        rows: list[dict[str, Any]],
        statements: list[str],
        statement: str,
        partitions: int = 0,
        evolve: bool = False,
    ) -> None:
        """Run `statement` with `rows` as the source view (in `partitions` Spark partitions;
        0: Spark's choice); with `evolve`, under Delta's schema evolution for `MERGE`."""
        session = self.runtime.session()
        columns = ", ".join(f"{c.name} {c.type.spark_sql()}" for c in schema.columns)
        statements.append(describe_rows(rows, columns))
        if evolve:
            statements.append(f"SET {AUTO_MERGE}=true")
            session.conf.set(AUTO_MERGE, "true")
        statements.append(statement)
        view = dataframe(self.runtime, schema, rows, partitions=partitions)
        view.createOrReplaceTempView(SOURCE_VIEW)
        try:
            session.sql(statement).collect()
        finally:
            session.catalog.dropTempView(SOURCE_VIEW)
            session.conf.unset(AUTO_MERGE)

    def _inspect(
        self,
        table: TableRef,
        spec: sc.ScenarioSpec,
        instants: list[tuple[str, str] | None],
        notes: list[str],
    ) -> dict[str, Any]:
        """What the table's live files hold (its log lists them, their footers say the
        schema); its protocol and deletion vectors go in `notes`."""

        def listed() -> list[Any]:
            log = replay(table.path)
            notes.append(protocol_note(log))
            deletes = deletes_note(log)
            if deletes:
                notes.append(deletes)
            return live_files(table.path, log)

        return inspect_files(self.runtime, self.step_timeout, spec, listed, instants)
