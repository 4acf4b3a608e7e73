"""What every table format's writer does with Spark the same way: quoted identifiers, the
`ALTER TABLE` of each schema-change step, the SQL of data steps over a view of their rows
(Iceberg's and Delta's writers), the rows of a DataFrame, the plain Parquet table of
the control check, a step run under the step timeout, the listing of the live files, and a
restart after Spark's JVM died."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakecompat.engines.errors import describe_error
from lakecompat.engines.infra.watchdog import Watchdog
from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import coerce_row
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.writer import layout as file_layout
from lakecompat.harness.writer.base import DataFile
from lakecompat.harness.writer.table_files import TableFileError

if TYPE_CHECKING:
    from lakecompat.engines.spark.runtime import SparkRuntime


def frame_input(schema: Schema, rows: list[dict[str, Any]]) -> tuple[str, list[tuple[Any, ...]]]:
    """The DDL schema string and the value tuples a DataFrame of `rows` is made from."""
    typed = [coerce_row(schema, row, "rows") for row in rows]
    ddl_schema = ", ".join(f"{quote(c.name)} {c.type.spark_sql()}" for c in schema.columns)
    return ddl_schema, [tuple(row[name] for name in schema.names) for row in typed]


#: The temporary view a data step's rows are read from (Iceberg's and Delta's writers).
SOURCE_VIEW = "lakecompat_rows"


def quote(identifier: str) -> str:
    """Backtick-quote an identifier for Spark SQL (identifiers are validated on load)."""
    return "`" + identifier.replace("`", "``") + "`"


def quote_path(path: str) -> str:
    """Quote each part of a column path: `point`.`x`."""
    return ".".join(quote(part) for part in path.split("."))


def ddl(table: str, step: Any, identifier: str | None = None) -> str:
    """The Spark SQL statement of a schema-change step on `table` (or on `identifier`, a name
    already quoted, such as `catalog`.`namespace`.`table`)."""
    target = f"ALTER TABLE {identifier or quote(table)}"
    match step:
        case sc.AddColumn(column=col, after=after, first=first):
            comment = f" COMMENT '{_literal(col.comment)}'" if col.comment else ""
            position = " FIRST" if first else (f" AFTER {quote(after)}" if after else "")
            spelled = f"{quote_path(col.name)} {col.type.spark_sql()}{comment}{position}"
            return f"{target} ADD COLUMNS ({spelled})"
        case sc.DropColumn(column=name):
            return f"{target} DROP COLUMN {quote_path(name)}"
        case sc.DropColumns(columns=names):
            return f"{target} DROP COLUMNS ({', '.join(quote(n) for n in names)})"
        case sc.MoveColumn(column=name, after=after, first=first):
            position = "FIRST" if first else f"AFTER {quote(after or '')}"
            return f"{target} ALTER COLUMN {quote(name)} {position}"
        case sc.RenameColumn(column=name, to=new_name):
            return f"{target} RENAME COLUMN {quote_path(name)} TO {quote(new_name)}"
        case sc.ChangeType(column=name, to=new_type):
            return f"{target} ALTER COLUMN {quote_path(name)} TYPE {new_type.spark_sql()}"
        case sc.AddPartitionField(column=name):
            return f"{target} ADD PARTITION FIELD {quote(name)}"
        case sc.DropPartitionField(column=name):
            return f"{target} DROP PARTITION FIELD {quote(name)}"
    raise TypeError(f"not a schema change: {step!r}")


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def restart_after_crash(runtime: SparkRuntime, message: str, timed_out: bool) -> str:
    """Restart Spark after its JVM died or was killed (a step timed out); the message says
    what happened."""
    if not timed_out:
        message = f"Spark's JVM died: {message}"
    try:
        runtime.restart()
    except Exception as exc:  # noqa: BLE001 - the next write will say so again
        message += f"; restarting Spark failed: {describe_error(exc)}"
    return message


def run_step(
    runtime: SparkRuntime, step_timeout: float, index: int, step: Any, apply: Callable[[], None]
) -> dict[str, Any] | None:
    """Run `apply()`, step `index` of a table's writing (0: the seed rows), with Spark killed
    after `step_timeout` seconds; None when it ran, else the `WriteResult` fields that say
    where and why it failed. A refused schema change is `rejected`; a crash or a timeout is
    never the writer refusing the change, and Spark is restarted after it."""
    failure: Exception | None = None
    with Watchdog(step_timeout, runtime.kill) as dog:
        try:
            apply()
        except Exception as exc:  # noqa: BLE001 - every writer failure becomes a cell
            failure = exc
    if failure is None:
        return None
    crashed = dog.fired or not runtime.alive()
    message = dog.reason if dog.fired else describe_error(failure)
    if crashed:
        message = restart_after_crash(runtime, message, dog.fired)
    refused = isinstance(step, sc.Upsert) and step.is_change
    return {
        "failed_at": f"steps[{index - 1}] ({step.op})" if index else "the seed rows",
        "message": message,
        "rejected": not crashed and (step.op in sc.SCHEMA_OPS or refused),
        "crashed": crashed,
    }


def dataframe(
    runtime: SparkRuntime, schema: Schema, rows: list[dict[str, Any]], partitions: int = 0
) -> Any:
    """A DataFrame of `rows`; with `partitions`, spread evenly over that many partitions."""
    ddl_schema, values = frame_input(schema, rows)
    session = runtime.session()
    if partitions:
        return session.createDataFrame(
            session.sparkContext.parallelize(values, partitions), ddl_schema
        )
    return session.createDataFrame(values, ddl_schema)


def spark_columns(frame: Any) -> tuple[tuple[str, str], ...]:
    """(name, Spark SQL type) of every column of a DataFrame."""
    return tuple((f.name, f.dataType.simpleString()) for f in frame.schema.fields)


def write_plain_parquet(
    runtime: SparkRuntime,
    tables_dir: Path,
    name: str,
    schema: Schema,
    rows: list[dict[str, Any]],
    key: str,
) -> TableRef:
    """A plain Parquet table of `rows` (no table format), for the engines' control check."""
    path = tables_dir / name
    frame = dataframe(runtime, schema, rows)
    frame.coalesce(1).write.mode("overwrite").parquet(str(path))
    return TableRef(name, path, "cow", key, format="parquet", columns=spark_columns(frame))


def inspect_files(
    runtime: SparkRuntime,
    step_timeout: float,
    spec: sc.ScenarioSpec,
    list_files: Callable[[], Sequence[DataFile]],
    instants: Sequence[tuple[str, str] | None],
) -> dict[str, Any]:
    """The evidence of a table's live files (`layout.describe`) from what `list_files` finds
    with Spark, killed after `step_timeout` seconds (a hang must not stop the run); when the
    files cannot be listed or read, the evidence says why (`layout.unlisted`)."""
    with Watchdog(step_timeout, runtime.kill) as dog:
        try:
            return file_layout.describe(spec, list_files(), instants)
        except (TableFileError, OSError) as exc:
            failure = str(exc)
        except Exception as exc:  # noqa: BLE001 - Spark's errors come through py4j
            failure = describe_error(exc)
    return file_layout.unlisted(spec, dog.reason if dog.fired else failure)


def insert_statement(identifier: str) -> str:
    """Append the source view's rows, matching columns by name."""
    return f"INSERT INTO {identifier} BY NAME SELECT * FROM {SOURCE_VIEW}"


def merge_statement(identifier: str, key: str, ordering: str | None) -> str:
    """Upsert the source view's rows by `key`, with Hudi's event-time ordering that the oracle
    models (Iceberg and Delta have no ordering field): a row replaces the stored one unless its
    value in `ordering` (`ScenarioSpec.write_order`) is older; with none, it always does."""
    k = quote(key)
    matched = "WHEN MATCHED"
    if ordering is not None:
        p = quote(ordering)
        matched += f" AND (s.{p} IS NULL OR t.{p} IS NULL OR s.{p} >= t.{p})"
    return (
        f"MERGE INTO {identifier} t USING {SOURCE_VIEW} s ON t.{k} = s.{k} "
        f"{matched} THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )


def delete_statement(identifier: str, key: str) -> str:
    """Delete the rows whose key is in the source view."""
    return (
        f"DELETE FROM {identifier} WHERE {quote(key)} IN (SELECT {quote(key)} FROM {SOURCE_VIEW})"
    )


def describe_rows(rows: list[Any], columns: str) -> str:
    """A comment line standing for the source view in the writer's evidence."""
    return f"-- {SOURCE_VIEW}: {len(rows)} row(s) of ({columns})"


def create_statement(
    identifier: str,
    columns: list[tuple[str, str]],
    partition_by: list[str],
    properties: dict[str, str],
    using: str,
) -> str:
    """`CREATE TABLE ... USING <using>` with the seed rows' columns (name, Spark SQL type), the
    scenario's partition columns and the table's properties (Iceberg's and Delta's writers)."""
    spelled = ", ".join(f"{quote(name)} {kind}" for name, kind in columns)
    partitioned = (
        f" PARTITIONED BY ({', '.join(quote(c) for c in partition_by)})" if partition_by else ""
    )
    props = ", ".join(f"'{key}'='{value}'" for key, value in properties.items())
    return (
        f"CREATE TABLE {identifier} ({spelled}) USING {using}{partitioned} TBLPROPERTIES ({props})"
    )


def hudi_only_step(spec: sc.ScenarioSpec, title: str) -> str | None:
    """Why a scenario has no table of a format (`title`) that lacks Hudi's own steps: a table
    service, a Hudi writer upgrade, or writer options (only Hudi's writer takes any); None."""
    for index, step in enumerate(spec.steps):
        where = f"steps[{index}] ({step.op})"
        if isinstance(step, sc.Compaction | sc.Clustering):
            return f"{where} is a Hudi table service; {title} tables have no such step"
        if isinstance(step, sc.UpgradeWriter):
            return f"{where} upgrades the Hudi writer"
        if getattr(step, "settings", None):
            formats = (sc.settings_format(key) for key in step.settings)
            titles = sorted({f.title for f in formats if f is not None})
            options = ", ".join(sorted(step.settings))
            return f"{where} sets {' and '.join(titles)} writer options ({options})"
    return None
