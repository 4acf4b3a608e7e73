"""The writer part of a reproduction of a Delta table: a standalone PySpark script.

The script does what `harness.writer.delta.writer.DeltaWriter` does for one scenario and table
type, spelled out: Spark's session with Delta's SQL extensions and catalog, the `CREATE TABLE`
with its properties (column mapping, deletion vectors, change data feed, type widening), the
seed rows' DataFrame append, and each step's SQL over a temporary view of its rows. It needs
nothing of lakecompat, only Spark 3.5 and Delta's jars named in its first lines.
"""

from __future__ import annotations

from typing import Any

from lakecompat.engines.infra.delta_jars import delta_pyspark, delta_spark, delta_storage
from lakecompat.engines.spark.runtime import DELTA_SESSION_SETTINGS
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, schema_of
from lakecompat.harness.scenario.types import coerce
from lakecompat.harness.writer.delta.statements import (
    AUTO_MERGE,
    SOURCE_VIEW,
    create_statement,
    delete_statement,
    insert_statement,
    merge_statement,
    not_applicable,
    table_properties,
)
from lakecompat.harness.writer.script_text import (
    STEP_MARK,
    ReproScriptError,
    coordinates,
    default_path,
    literal,
    script,
    shell,
    source,
    submit_command,
)
from lakecompat.harness.writer.spark_sql import ddl, frame_input

#: Stands for the table's name in the statements: the script puts in its own (`TABLE`).
_TABLE = "@TABLE@"

_HEADER = '''\
"""{title}

lakecompat scenario `{scenario}`, {table_type} Delta table (column mapping {column_mapping}),
written by Spark {spark} with Delta {delta}. TABLE_PATH is where the table goes; default
{path}. Any table already there is replaced. The table is named by its path, delta.`TABLE_PATH`.

On the machine that generated this script, run it from this folder with the Spark lakecompat
wrote the table with (PySpark's own spark-submit, from lakecompat's virtualenv or, for Spark
4, its Python environment in lakecompat's cache: no activated virtualenv needed) and Delta's
jars in lakecompat's cache (no network needed), as `lakecompat repro` runs it:

{local}

Elsewhere, Spark {spark_line} fetches Delta's jars by their Maven coordinates:

    spark-submit --packages {coordinates} \\\\
        --driver-java-options -Duser.timezone=UTC writer.py [TABLE_PATH]
"""

import datetime
import os
import shutil
import sys
from decimal import Decimal

from pyspark.sql import SparkSession

PATH = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else {path!r})
TABLE = "delta.`" + PATH + "`"

builder = SparkSession.builder.appName("lakecompat-repro")
for key, value in {session}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
shutil.rmtree(PATH, ignore_errors=True)


def sql(statement):
    """Run a Spark SQL statement."""
    spark.sql(statement).collect()


def step(name):
    """Say which step runs: a failure belongs to the last step printed."""
    print(f"{STEP_MARK}{{name}}", flush=True)


def frame(rows, schema, partitions=0):
    """A DataFrame of the rows (in that many Spark partitions; 0: Spark's choice)."""
    if partitions:
        return spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions), schema)
    return spark.createDataFrame(rows, schema)


def with_rows(rows, schema, statement, partitions=0, evolve=False):
    """Run the statement with the rows as the temporary view {view} (with `evolve`, under
    Delta's schema evolution for MERGE)."""
    frame(rows, schema, partitions).createOrReplaceTempView({view!r})
    if evolve:
        spark.conf.set({auto_merge!r}, "true")
    try:
        sql(statement)
    finally:
        spark.catalog.dropTempView({view!r})
        spark.conf.unset({auto_merge!r})


def check_columns(wanted):
    """Stop where lakecompat's writer stops: a MERGE that left out the rows' new columns."""
    names = [field.name for field in spark.read.format("delta").load(PATH).schema.fields]
    missing = [name for name in wanted if name not in names]
    if missing:
        sys.exit(f"the write left out column(s) {{', '.join(missing)}}: MERGE INTO kept the "
                 f"table's schema ({{', '.join(names)}}), and the change was not made")

'''


def delta_script(
    scenario: sc.Scenario, table_type: str, spark: str, delta: str, column_mapping: str
) -> str:
    """The PySpark script that writes `scenario`'s Delta table as lakecompat's writer does,
    with Delta `delta` and column mapping `column_mapping`."""
    spec = scenario.spec
    reason = not_applicable(spec)
    if reason:
        raise ReproScriptError(f"{scenario.id} has no Delta table: {reason}")
    jar = delta_spark(delta)
    header = _HEADER.format(
        title=spec.title,
        scenario=scenario.id,
        table_type={"cow": "copy-on-write", "mor": "merge-on-read"}[table_type],
        column_mapping=column_mapping,
        spark=spark,
        delta=delta,
        coordinates=coordinates(jar),
        spark_line=".".join(spark.split(".")[:2]),
        local=shell(
            *submit_command(jar, also=(delta_storage(delta),), pyspark=delta_pyspark(delta)),
            "    ",
        ),
        STEP_MARK=STEP_MARK,
        path=default_path(scenario.id, table_type),
        session=literal(DELTA_SESSION_SETTINGS),
        view=SOURCE_VIEW,
        auto_merge=AUTO_MERGE,
    )

    def step_lines(index: int, step: Any, before: TableState, after: TableState) -> list[str]:
        return _step(table_type, spec, step, before, after, index == 0, column_mapping)

    return script(header, spec, step_lines)


def _step(
    table_type: str,
    spec: sc.ScenarioSpec,
    step: Any,
    before: Any,
    after: Any,
    first: bool,
    column_mapping: str,
) -> list[str]:
    """The script lines of one step (mirrors the Delta writer's `_apply`)."""
    match step:
        case sc.Insert(rows=rows) if first:
            columns = [(c.name, c.type.spark_sql()) for c in before.schema.columns]
            properties = table_properties(table_type, column_mapping, spec)
            create = create_statement(_TABLE, columns, list(spec.partition_by), properties)
            ddl_schema, values = frame_input(before.schema, rows)
            append = (
                f"frame({literal(values)}, {ddl_schema!r}, partitions={len(rows)})"
                '.write.format("delta").mode("append").save(PATH)'
            )
            return [_sql(create), append]
        case sc.Insert(rows=rows):
            return _with_rows(before.schema, rows, insert_statement(_TABLE), partitions=1)
        case sc.Upsert(rows=rows, schema_=declared):
            schema = schema_of(declared) if declared else before.schema
            merge = merge_statement(_TABLE, spec.key, spec.write_order)
            lines = _with_rows(schema, rows, merge, evolve=declared is not None)
            if declared is not None:
                lines.append(f"check_columns({source(list(after.schema.names))})")
            return lines
        case sc.Delete(keys=keys):
            key_type = before.schema.column(spec.key).type
            doomed = [before.rows[coerce(k, key_type)] for k in keys]
            return _with_rows(before.schema, doomed, delete_statement(_TABLE, spec.key))
        case _:
            return [_sql(ddl("", step, identifier=_TABLE))]


def _with_rows(
    schema: Any,
    rows: list[dict[str, Any]],
    statement: str,
    partitions: int = 0,
    evolve: bool = False,
) -> list[str]:
    ddl_schema, values = frame_input(schema, rows)
    spelled = _spelled(statement)
    extra = f", partitions={partitions}" if partitions else ""
    extra += ", evolve=True" if evolve else ""
    return [
        f"with_rows(\n    {literal(values, '    ')},\n    {ddl_schema!r},\n    {spelled}{extra},\n)"
    ]


def _sql(statement: str) -> str:
    return f"sql({_spelled(statement)})"


def _spelled(statement: str) -> str:
    """The statement as Python source, the script's `TABLE` where it names the table."""
    return " + TABLE + ".join(repr(part) for part in statement.split(_TABLE))
