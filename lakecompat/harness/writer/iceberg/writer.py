"""The Iceberg writer: creates an Iceberg table with Spark and runs a scenario's steps on it.

PySpark keeps one JVM per Python process and the run's own Spark has the Hudi bundle loaded,
so Iceberg's Spark runtime runs in a process of its own (`engines.spark.process`): each table
is written there by `write_table`, start to finish, and the result comes back. Tables are
named through Iceberg's Hadoop catalog (a folder per table, its metadata beside its data),
registered for the folder the tables go to: a table is `<tables_dir>/<name>`, like a Hudi one.
Data steps are SQL over a temporary view of their rows; schema changes are `ALTER TABLE`. A
refused schema change is a result (`REJECTED`).

Iceberg's metadata names every file by its absolute path, so a table is read where it was
written (`docs/research/iceberg.md`): the table cache has it written in its entry
(`TableWriter.relocatable`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.infra.iceberg_jars import DEFAULT_FORMAT_VERSION, iceberg_spark_runtime
from lakecompat.engines.spark.iceberg import iceberg_jars
from lakecompat.engines.spark.runtime import (
    ICEBERG_SESSION_SETTINGS,
    FormatJars,
    SparkRuntime,
    iceberg_catalog_name,
    iceberg_catalog_settings,
)
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, evolve, reference_index, schema_of
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.scenario.types import coerce
from lakecompat.harness.writer import layout as file_layout
from lakecompat.harness.writer.base import DataFile, WriteResult
from lakecompat.harness.writer.iceberg.files import (
    appended_states,
    committed_states,
    current_snapshot,
    delete_files_note,
    live_files,
    moment_after,
    snapshot_log,
)
from lakecompat.harness.writer.iceberg.script import iceberg_script
from lakecompat.harness.writer.iceberg.statements import (
    SEED_WRITE_OPTIONS,
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


class IcebergWriter(SparkProcessWriter):
    """Writes each scenario × table type into an Iceberg table of its own below `tables_dir`,
    with Spark and Iceberg's runtime in a process of its own."""

    format = "iceberg"

    @classmethod
    def jars(cls, release: str) -> FormatJars:
        """Iceberg's Spark runtime of `release`."""
        return iceberg_jars(release)

    @staticmethod
    def table_function() -> Callable[..., WriteResult]:
        return write_table

    @property
    def versions(self) -> dict[str, str]:
        """Spark's and Iceberg's releases and the format version."""
        return {
            "spark": self._spark_version,
            "iceberg": self.release,
            "format_version": self.version,
        }

    @property
    def settings(self) -> dict[str, Any]:
        """Spark's session settings and the table properties of each table type."""
        return {
            "session": ICEBERG_SESSION_SETTINGS,
            "cow": table_properties("cow", self.version),
            "mor": table_properties("mor", self.version),
            "seed": SEED_WRITE_OPTIONS,
        }

    @classmethod
    def not_applicable(cls, scenario: sc.Scenario) -> str | None:
        """Why the scenario has no Iceberg table (a Hudi-only step), or None."""
        return not_applicable(scenario.spec)

    def script(self, scenario: sc.Scenario, table_type: str) -> str:
        """A PySpark script that writes the same table with this writer's Spark and Iceberg."""
        return iceberg_script(scenario, table_type, self._spark_version, self.release, self.version)

    @classmethod
    def script_jar(cls, versions: dict[str, str]) -> MavenArtifact:
        """Iceberg's Spark runtime of the writer's release."""
        return iceberg_spark_runtime(versions["iceberg"])

    @classmethod
    def release_words(cls, versions: dict[str, str]) -> str:
        """`Iceberg 1.10.0 (format version 2)`."""
        version = versions.get("format_version", DEFAULT_FORMAT_VERSION)
        return f"Iceberg {versions['iceberg']} (format version {version})"

    @classmethod
    def read_back(cls, session: Any, path: Path) -> tuple[list[Any], list[Any]]:
        """By the table's folder (Iceberg matches columns by field id)."""
        frame = session.read.format("iceberg").load(str(path))
        return list(frame.schema.fields), frame.collect()


def write_table(
    runtime: SparkRuntime,
    tables_dir: Path,
    step_timeout: float,
    scenario: sc.Scenario,
    table_type: str,
    format_version: str,
) -> WriteResult:
    """The table of `scenario` × `table_type`, written with `runtime` (Spark with Iceberg's
    runtime, in its own process)."""
    return _Steps(runtime, tables_dir, step_timeout, format_version).write(scenario, table_type)


class _Steps:
    """Writes one table in Spark's process: the seed rows, then each step."""

    def __init__(
        self, runtime: SparkRuntime, tables_dir: Path, step_timeout: float, format_version: str
    ) -> None:
        self.runtime = runtime
        self.tables_dir = tables_dir
        self.step_timeout = step_timeout
        self.format_version = format_version
        self.catalog = iceberg_catalog_name(tables_dir.parent)

    def write(self, scenario: sc.Scenario, table_type: str) -> WriteResult:
        spec = scenario.spec
        name = sc.table_name(scenario.id, table_type)
        table = TableRef(name, self.tables_dir / name, table_type, spec.key, "iceberg")
        identifier = table_identifier(self.catalog, self.tables_dir.name, name)
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
            done.instants.append(current_snapshot(table.path))
            unapplied = self._unapplied_change(identifier, step, states[index])
            if unapplied:
                where = f"steps[{index - 1}] ({step.op})"
                return replace(done, failed_at=where, message=unapplied, rejected=True)
        columns = spark_columns(self._session().table(identifier))
        reference, log = reference_index(spec), snapshot_log(table.path)
        table = replace(
            table,
            columns=columns,
            reference_instant=done.instants[reference],
            reference_time=moment_after(done.instants, reference, log),
            appended=appended_states(done.instants, reference, log),
            committed=committed_states(done.instants, reference),
            partition_by=tuple(spec.partition_by),
        )
        deletes: list[str] = []
        files = self._inspect(identifier, table, spec, done.instants, deletes)
        file_layout.note(files, f"Iceberg format version {self.format_version}")
        if deletes:
            file_layout.note(files, delete_files_note(deletes))
        return replace(done, table=table, files=files)

    def _unapplied_change(self, identifier: str, step: Any, after: TableState) -> str | None:
        """What a write with a schema of its own left out of the table's schema (Iceberg's
        `MERGE INTO` ignores source columns the table lacks), or None."""
        if not (isinstance(step, sc.Upsert) and step.schema_ is not None):
            return None
        names = [f.name for f in self._session().table(identifier).schema.fields]
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
        session = self._session()
        match step:
            case sc.Insert(rows=rows) if index == 0:
                columns = [(c.name, c.type.spark_sql()) for c in before.schema.columns]
                properties = table_properties(table.table_type, self.format_version)
                create = create_statement(identifier, columns, list(spec.partition_by), properties)
                statements.append(create)
                session.sql(create).collect()
                frame = dataframe(self.runtime, before.schema, rows, partitions=len(rows))
                options = ", ".join(f"{k}={v}" for k, v in SEED_WRITE_OPTIONS.items())
                statements.append(
                    f"-- DataFrame writeTo({identifier}).append(), {len(rows)} row(s), "
                    f"one Spark partition per row; options {options}"
                )
                frame.writeTo(identifier).options(**SEED_WRITE_OPTIONS).append()
            case sc.Insert(rows=rows):
                # One Spark partition: an insert of a few rows into an unpartitioned table
                # is one data file, as a small batch is (rows of several partitions-to-be in
                # one file is what partition evolution has to read correctly).
                insert = insert_statement(identifier)
                self._with_rows(before.schema, rows, statements, insert, partitions=1)
            case sc.Upsert(rows=rows, schema_=declared):
                schema = schema_of(declared) if declared else before.schema
                merge = merge_statement(identifier, spec.key, spec.write_order)
                self._with_rows(schema, rows, statements, merge)
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
    ) -> None:
        """Run `statement` with `rows` as the source view (in `partitions` Spark partitions;
        0: Spark's choice)."""
        columns = ", ".join(f"{c.name} {c.type.spark_sql()}" for c in schema.columns)
        statements.append(describe_rows(rows, columns))
        statements.append(statement)
        view = dataframe(self.runtime, schema, rows, partitions=partitions)
        view.createOrReplaceTempView(SOURCE_VIEW)
        try:
            self._session().sql(statement).collect()
        finally:
            self._session().catalog.dropTempView(SOURCE_VIEW)

    def _session(self) -> Any:
        """Spark's session, with the catalog of this writer's folder registered."""
        session = self.runtime.session()
        for key, value in iceberg_catalog_settings(self.catalog, self.tables_dir.parent).items():
            session.conf.set(key, value)
        return session

    def _inspect(
        self,
        identifier: str,
        table: TableRef,
        spec: sc.ScenarioSpec,
        instants: list[tuple[str, str] | None],
        deletes: list[str],
    ) -> dict[str, Any]:
        """What the table's live files hold (Iceberg lists them, their footers say the schema);
        the paths of its live delete files are put in `deletes`."""

        def listed() -> list[DataFile]:
            entries = f"SELECT status, sequence_number, data_file FROM {identifier}.entries"
            found = self._session().sql(entries).collect()
            files = live_files([row.asDict(recursive=True) for row in found], table.path)
            deletes[:] = [f.path for f in files if f.kind == "delete"]
            return files

        return inspect_files(self.runtime, self.step_timeout, spec, listed, instants)
