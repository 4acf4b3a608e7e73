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

import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engines.base import TableRef, describe_error
from engines.hudi_files import HudiFileError, live_files
from engines.spark_process import SparkProcess
from engines.spark_runtime import SparkRuntime
from harness import file_layout
from harness import scenario as sc
from harness.oracle import TableState, coerce_row, evolve, reference_index, schema_of
from harness.schema import Schema
from harness.types import coerce
from harness.watchdog import Watchdog

DDL_WORKAROUND = {"hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true"}
#: Settings of every write and every SQL statement. Hudi's embedded timeline server (an HTTP
#: server per write, listening on every interface) only serves executors a cached view of the
#: files; Spark runs in one JVM here, so without it writes are about 13 % faster and the
#: tables the same.
WRITE_SETTINGS = {"hoodie.embed.timeline.server": "false"}
NON_PARTITIONED = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
PARTITIONED = "org.apache.hudi.keygen.ComplexKeyGenerator"
TABLE_TYPE_NAMES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
#: The seed rows create the table with a bulk insert, one row per file group: the rows a later
#: step does not touch keep the files written before a schema change, as in a real table of
#: many file groups (an upsert into a copy-on-write table rewrites every file group it
#: touches). The input has one Spark partition per row and the bulk insert keeps them (sort
#: mode NONE); without the row writer, files are written as an insert writes them. Later
#: writes keep Hudi's defaults.
SEED_LAYOUT = {
    "hoodie.bulkinsert.sort.mode": "NONE",
    "hoodie.datasource.write.row.writer.enable": "false",
}
#: Hudi's marker file in every partition folder (and in the table folder without partitions).
_PARTITION_MARKER = ".hoodie_partition_metadata"
#: Hudi's own folder (timeline, metadata table), which holds partition markers of its own.
_METADATA_FOLDER = ".hoodie"
#: More file slices than any scenario table has (the procedure lists 10 by default).
_MAX_SLICES = 100_000
# A completed instant: `<requested>_<completed>.<action>` (Hudi 1.x) or `<requested>.<action>`.
_COMPLETED = re.compile(r"^(\d{14,})(?:_(\d{14,}))?\.(commit|deltacommit|replacecommit)$")


#: A schema change's statement runs with schema-on-read and the workaround above.
DDL_SETTINGS = {"hoodie.schema.on.read.enable": "true", **DDL_WORKAROUND}
#: Hudi schedules a compaction after 5 delta commits; a scenario asks for it now.
COMPACTION_SETTINGS = {"hoodie.compact.inline.max.delta.commits": "1"}


def compaction_statement(path: str) -> str:
    """The procedure call that compacts a merge-on-read table now."""
    return f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}')"


def clustering_statement(path: str) -> str:
    """The procedure call that clusters a table now."""
    return f"CALL run_clustering(path => '{path}')"


def write_options(
    table_name: str, table_type: str, spec: sc.ScenarioSpec, operation: str
) -> dict[str, str]:
    """The Hudi datasource options of one DataFrame write (before a step's own settings)."""
    return {
        **WRITE_SETTINGS,
        "hoodie.table.name": table_name,
        "hoodie.datasource.write.table.type": TABLE_TYPE_NAMES[table_type],
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.recordkey.field": spec.key,
        "hoodie.datasource.write.precombine.field": spec.precombine,
        **_partitioning(spec),
        "hoodie.schema.on.read.enable": "true",
        # New keys always go to new base files: what the oracle's read-optimized model assumes.
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
    }


def _partitioning(spec: sc.ScenarioSpec) -> dict[str, str]:
    if not spec.partition_by:
        return {"hoodie.datasource.write.keygenerator.class": NON_PARTITIONED}
    return {
        "hoodie.datasource.write.keygenerator.class": PARTITIONED,
        "hoodie.datasource.write.partitionpath.field": ",".join(spec.partition_by),
        # Folders named `col=value`, which Hive and Trino map to partitions.
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }


def seed_settings(rows: int) -> dict[str, str]:
    """The seed rows' bulk insert settings: one file group per row."""
    return {**SEED_LAYOUT, "hoodie.bulkinsert.shuffle.parallelism": str(rows)}


def frame_input(schema: Schema, rows: list[dict[str, Any]]) -> tuple[str, list[tuple[Any, ...]]]:
    """The DDL schema string and the value tuples a DataFrame of `rows` is made from."""
    typed = [coerce_row(schema, row, "rows") for row in rows]
    ddl_schema = ", ".join(f"{quote(c.name)} {c.type.spark_sql()}" for c in schema.columns)
    return ddl_schema, [tuple(row[name] for name in schema.names) for row in typed]


def listing_statements(table: TableRef, hudi_version: str) -> list[str]:
    """The `show_fsview_latest` calls that list a table's live file slices.

    Hudi 1.x lists every partition in one call; before 1.0 the procedure needs the partition
    (`partition_path`, '' for a table without partitions), so there is one call per partition:
    the folders that hold Hudi's partition marker file.
    """
    head = f"CALL show_fsview_latest(table => '{table.name}', limit => {_MAX_SLICES}"
    if int(hudi_version.split(".")[0]) >= 1:
        return [head + ")"]
    markers = sorted(table.path.rglob(_PARTITION_MARKER))
    partitions = [
        m.parent.relative_to(table.path).as_posix()
        for m in markers
        if _METADATA_FOLDER not in m.relative_to(table.path).parts
    ]
    return [f"{head}, partition_path => '{p if p != '.' else ''}')" for p in partitions]


def completed_instants(table_path: Path) -> dict[str, str]:
    """Requested time -> completion time of every completed commit in the table's timeline.

    Hudi 0.x timelines (in `.hoodie/`) know one time per instant; it stands for both. A 1.x
    timeline (`.hoodie/timeline/`) wins where a table upgraded from 0.x still has both.
    """
    found: dict[str, str] = {}
    for folder in (table_path / ".hoodie", table_path / ".hoodie" / "timeline"):
        if folder.is_dir():
            for entry in sorted(folder.iterdir()):
                match = _COMPLETED.match(entry.name)
                if match:
                    found[match.group(1)] = match.group(2) or match.group(1)
    return found


def latest_instant(table_path: Path) -> tuple[str, str] | None:
    """(requested, completed) time of the newest completed commit in the table's timeline."""
    found = completed_instants(table_path)
    return max(found.items()) if found else None


def completed_as_now(
    table_path: Path, instants: list[tuple[str, str] | None]
) -> list[tuple[str, str] | None]:
    """`instants` with the completion times the table's timeline holds now: upgrading a table
    from Hudi 0.x to 1.x gives the commits written before it completion times of their own."""
    now = completed_instants(table_path)
    return [None if i is None else (i[0], now.get(i[0], i[1])) for i in instants]


def table_version(table_path: Path) -> str:
    """The table version in `.hoodie/hoodie.properties` (6 for Hudi 0.14-0.15, 8 for 1.0),
    or "?" when it cannot be read."""
    try:
        text = (table_path / ".hoodie" / "hoodie.properties").read_text()
    except OSError:
        return "?"
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "hoodie.table.version":
            return value.strip()
    return "?"


@dataclass
class WriteResult:
    """A written table, or the step that failed and why (`rejected`: a refused schema change)."""

    table: TableRef
    failed_at: str | None = None
    message: str | None = None
    rejected: bool = False
    sql: list[str] | None = None
    step_seconds: list[float] = field(default_factory=list)
    #: The newest completed instant (requested, completed) after the seed rows and each step.
    instants: list[tuple[str, str] | None] = field(default_factory=list)
    #: The table's live files after the steps (`harness.file_layout.describe`); None when the
    #: writer stopped early.
    files: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.failed_at is None


def quote(identifier: str) -> str:
    """Backtick-quote an identifier for Spark SQL (identifiers are validated on load)."""
    return "`" + identifier.replace("`", "``") + "`"


def quote_path(path: str) -> str:
    """Quote each part of a column path: `point`.`x`."""
    return ".".join(quote(part) for part in path.split("."))


def ddl(table: str, step: Any) -> str:
    """The Spark SQL statement of a schema-change step."""
    target = f"ALTER TABLE {quote(table)}"
    match step:
        case sc.AddColumn(column=col, after=after, first=first):
            comment = f" COMMENT '{_literal(col.comment)}'" if col.comment else ""
            position = " FIRST" if first else (f" AFTER {quote(after)}" if after else "")
            spelled = f"{quote_path(col.name)} {col.type.spark_sql()}{comment}{position}"
            return f"{target} ADD COLUMNS ({spelled})"
        case sc.DropColumn(column=name):
            return f"{target} DROP COLUMN {quote(name)}"
        case sc.DropColumns(columns=names):
            return f"{target} DROP COLUMNS ({', '.join(quote(n) for n in names)})"
        case sc.MoveColumn(column=name, after=after, first=first):
            position = "FIRST" if first else f"AFTER {quote(after or '')}"
            return f"{target} ALTER COLUMN {quote(name)} {position}"
        case sc.RenameColumn(column=name, to=new_name):
            return f"{target} RENAME COLUMN {quote_path(name)} TO {quote(new_name)}"
        case sc.ChangeType(column=name, to=new_type):
            return f"{target} ALTER COLUMN {quote_path(name)} TYPE {new_type.spark_sql()}"
    raise TypeError(f"not a schema change: {step!r}")


def _describe_write(
    operation: str, rows: list[Any], schema: Schema, settings: dict[str, str] | None = None
) -> str:
    """A comment line standing for a DataFrame write in the writer's evidence."""
    columns = ", ".join(f"{c.name} {c.type.spark_sql()}" for c in schema.columns)
    extra = "".join(f"; {key}={value}" for key, value in (settings or {}).items())
    return (
        f"-- DataFrame write, Hudi operation {operation}: {len(rows)} row(s) of ({columns})" + extra
    )


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def partition_folders(table_path: Path, depth: int) -> tuple[str, ...]:
    """The Hive-style partition folders (`a=1/b=x`) that hold data files, sorted."""
    if depth == 0:
        return ()
    found = set()
    for data_file in table_path.rglob("*"):
        relative = data_file.relative_to(table_path).parts
        if data_file.is_file() and len(relative) == depth + 1 and not relative[0].startswith("."):
            found.add("/".join(relative[:depth]))
    return tuple(sorted(found))


class HudiWriter:
    """Writes each scenario × table type into its own folder below `tables_dir`."""

    def __init__(self, runtime: SparkRuntime, tables_dir: Path, step_timeout: float = 0) -> None:
        self.runtime = runtime
        self.tables_dir = tables_dir
        #: Seconds a step may take before Spark is killed and restarted (0: no limit).
        self.step_timeout = step_timeout
        self._older_writers: dict[str, SparkProcess] = {}

    @property
    def versions(self) -> dict[str, str]:
        return {"spark": self.runtime.spark_version, "hudi": self.runtime.hudi_version}

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
                done = self._older(older).write(scenario, table_type, start)
            except RuntimeError as exc:
                return replace(done, failed_at="the seed rows", message=str(exc))
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
        failed = self._run_steps(table, spec, steps, states, range(start, stop or len(steps)), done)
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
            file_layout.note(files, f"table version {table_version(table.path)} after the steps")
        return replace(done, table=table, files=files)

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
            failure: Exception | None = None
            with Watchdog(self.step_timeout, self.runtime.kill) as dog:
                try:
                    self._apply(table, spec, step, states[max(index - 1, 0)], statements)
                except Exception as exc:  # noqa: BLE001 - every writer failure becomes a cell
                    failure = exc
            if failure is not None:
                crashed = dog.fired or not self.runtime.alive()
                message = dog.reason if dog.fired else describe_error(failure)
                if crashed:
                    message = self._recover(message, dog.fired)
                refused = isinstance(step, sc.Upsert) and step.is_change
                where = f"steps[{index - 1}] ({step.op})" if index else "the seed rows"
                return replace(
                    done,
                    failed_at=where,
                    message=message,
                    # A crash or a timeout is never the writer refusing the change.
                    rejected=not crashed and (step.op in sc.SCHEMA_OPS or refused),
                )
            timings.append(time.monotonic() - started)
            instants.append(latest_instant(table.path))
            if index == 0:
                self._register(table)
        return None

    def _older(self, hudi: str) -> SparkProcess:
        """The Spark process of an older release (started on first use)."""
        if hudi not in self._older_writers:
            self._older_writers[hudi] = SparkProcess(
                hudi, self.runtime.log_dir, self.tables_dir, self.step_timeout, self.runtime.master
            )
        return self._older_writers[hudi]

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
        with Watchdog(self.step_timeout, self.runtime.kill) as dog:  # a hang must not stop the run
            try:
                rows = []
                for statement in listing_statements(table, self.runtime.hudi_version):
                    found = self.runtime.session().sql(statement).collect()
                    rows += [row.asDict() for row in found]
                return file_layout.describe(spec, live_files(rows, table.path), instants)
            except (HudiFileError, OSError) as exc:
                failure = str(exc)
            except Exception as exc:  # noqa: BLE001 - Spark's errors come through py4j
                failure = describe_error(exc)
        return file_layout.unlisted(spec, dog.reason if dog.fired else failure)

    def _recover(self, message: str, timed_out: bool) -> str:
        """Restart Spark after its JVM died or was killed; the message says what happened."""
        if not timed_out:
            message = f"Spark's JVM died: {message}"
        try:
            self.runtime.restart()
        except Exception as exc:  # noqa: BLE001 - the next write will say so again
            message += f"; restarting Spark failed: {describe_error(exc)}"
        return message

    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        """A plain Parquet table (no Hudi), for the engines' control check."""
        path = self.tables_dir / name
        frame = self._frame(schema, rows)
        frame.coalesce(1).write.mode("overwrite").parquet(str(path))
        columns = tuple((f.name, f.dataType.simpleString()) for f in frame.schema.fields)
        return TableRef(name, path, "cow", key, format="parquet", columns=columns)

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
                statements.append(_describe_write("bulk_insert", rows, before.schema, settings))
                frame = self._frame(before.schema, rows, partitions=len(rows))
                options = {**self._options(table, spec, "bulk_insert"), **settings}
                frame.write.format("hudi").options(**options).mode("overwrite").save(
                    str(table.path)
                )
            case sc.Insert(rows=rows, settings=settings):
                statements.append(_describe_write("insert", rows, before.schema, settings))
                self._write_rows(table, spec, before.schema, rows, "insert", "append", settings)
            case sc.Upsert(rows=rows, schema_=declared, settings=settings):
                schema = schema_of(declared) if declared else before.schema
                statements.append(_describe_write("upsert", rows, schema, settings))
                self._write_rows(table, spec, schema, rows, "upsert", "append", settings)
            case sc.Delete(keys=keys):
                key_type = before.schema.column(spec.key).type
                doomed = [before.rows[coerce(k, key_type)] for k in keys]
                statements.append(_describe_write("delete", doomed, before.schema))
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
        frame = self._frame(schema, rows)
        options = {**self._options(table, spec, operation), **(settings or {})}
        frame.write.format("hudi").options(**options).mode(mode).save(str(table.path))

    def _frame(self, schema: Schema, rows: list[dict[str, Any]], partitions: int = 0) -> Any:
        """A DataFrame of `rows`; with `partitions`, spread evenly over that many partitions."""
        ddl_schema, values = frame_input(schema, rows)
        session = self.runtime.session()
        if partitions:
            return session.createDataFrame(
                session.sparkContext.parallelize(values, partitions), ddl_schema
            )
        return session.createDataFrame(values, ddl_schema)

    def _options(self, table: TableRef, spec: sc.ScenarioSpec, operation: str) -> dict[str, str]:
        return write_options(table.name, table.table_type, spec, operation)

    def _latest_columns(self, table: TableRef) -> tuple[tuple[str, str], ...]:
        """The columns of the table's latest Hudi schema, as Hive sync would register them."""
        frame = self.runtime.session().read.format("hudi").load(str(table.path))
        return tuple((f.name, f.dataType.simpleString()) for f in frame.schema.fields)

    def _register(self, table: TableRef) -> None:
        self._sql(f"DROP TABLE IF EXISTS {quote(table.name)}", {})
        self._sql(f"CREATE TABLE {quote(table.name)} USING hudi LOCATION '{table.path}'", {})

    def _sql(self, statement: str, settings: dict[str, str]) -> None:
        session = self.runtime.session()
        settings = {**WRITE_SETTINGS, **settings}
        for key, value in settings.items():
            session.conf.set(key, value)
        try:
            session.sql(statement).collect()
        finally:
            for key in settings:
                session.conf.unset(key)
