"""The writer part of a reproduction of a Hudi table: a standalone PySpark script.

The script does what `harness.writer.hudi.writer.HudiWriter` does for one scenario and table type,
spelled out: the session settings, each DataFrame write with its exact Hudi options and rows,
and each Spark SQL statement with the settings it runs under. It needs nothing of lakecompat,
only Spark 3.5 and the Hudi bundle named in its first lines.
"""

from __future__ import annotations

from typing import Any

from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.spark.runtime import SESSION_SETTINGS
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import TableState, schema_of
from lakecompat.harness.scenario.types import coerce
from lakecompat.harness.writer.hudi.statements import (
    COMPACTION_SETTINGS,
    DDL_SETTINGS,
    WRITE_SETTINGS,
    bloom_filter_settings,
    clustering_statement,
    compaction_statement,
    ddl,
    frame_input,
    quote,
    seed_settings,
    version_settings,
    write_options,
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

_HEADER = '''\
"""{title}

lakecompat scenario `{scenario}`, {table_type} table, written by Spark {spark} with Hudi {hudi}.
TABLE_PATH is where the table goes; default {path}. Any table already there is replaced.

On the machine that generated this script, run it from this folder with the Spark of
lakecompat's virtualenv (PySpark's own spark-submit: no activated virtualenv needed) and the
Hudi bundle in lakecompat's cache (no network needed), as `lakecompat repro` runs it:

{local}

Elsewhere, Spark {spark_line} fetches the Hudi bundle by its Maven coordinates:

    spark-submit --packages {coordinates} \\\\
        --driver-java-options -Duser.timezone=UTC writer.py [TABLE_PATH]
"""

import datetime
import shutil
import sys
from decimal import Decimal

from pyspark.sql import SparkSession

PATH = sys.argv[1] if len(sys.argv) > 1 else {path!r}
TABLE = {table!r}

builder = SparkSession.builder.appName("lakecompat-repro")
for key, value in {session}.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
shutil.rmtree(PATH, ignore_errors=True)


def sql(statement, settings):
    """Run a Spark SQL statement with session settings that hold for it alone."""
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        spark.sql(statement).collect()
    finally:
        for key in settings:
            spark.conf.unset(key)


def step(name):
    """Say which step runs: a failure belongs to the last step printed."""
    print(f"{STEP_MARK}{{name}}", flush=True)


def write(rows, schema, options, mode, partitions=0):
    """A DataFrame write through Hudi's datasource."""
    if partitions:
        frame = spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions), schema)
    else:
        frame = spark.createDataFrame(rows, schema)
    frame.write.format("hudi").options(**options).mode(mode).save(PATH)

'''


def writer_script(
    scenario: sc.Scenario,
    table_type: str,
    spark: str,
    hudi: str,
    table_version: str | None = None,
) -> str:
    """The PySpark script that writes `scenario`'s table as lakecompat's writer does (with
    `table_version`: asking Hudi for that table version in every write and statement)."""
    spec = scenario.spec
    if spec.upgrade is not None:
        raise ReproScriptError(
            f"{scenario.id} changes the writer's Hudi release midway (upgrade_writer); a "
            "reproduction script covers one release only, so this scenario has none yet"
        )
    table = sc.table_name(scenario.id, table_type)
    bundle = hudi_bundle(hudi)
    header = _HEADER.format(
        title=spec.title,
        scenario=scenario.id,
        table_type={"cow": "copy-on-write", "mor": "merge-on-read"}[table_type],
        spark=spark,
        hudi=hudi + (f" asking for table version {table_version}" if table_version else ""),
        coordinates=coordinates(bundle),
        spark_line=".".join(spark.split(".")[:2]),
        local=shell(*submit_command(bundle), "    "),
        STEP_MARK=STEP_MARK,
        path=default_path(scenario.id, table_type),
        table=table,
        # the Parquet bloom filters the writer writes: Hadoop settings, `spark.hadoop.` here
        session=literal(
            {
                **SESSION_SETTINGS,
                **{f"spark.hadoop.{k}": v for k, v in bloom_filter_settings(spec).items()},
            }
        ),
    )

    def step_lines(index: int, step: Any, before: TableState, after: TableState) -> list[str]:
        return _step(table, table_type, spec, step, before, index == 0, table_version)

    return script(header, spec, step_lines, seed_note=": a bulk insert")


def _step(
    table: str,
    table_type: str,
    spec: sc.ScenarioSpec,
    step: Any,
    before: Any,
    first: bool,
    table_version: str | None,
) -> list[str]:
    """The script lines of one step (mirrors `HudiWriter._apply`)."""
    common = {**WRITE_SETTINGS, **version_settings(table_version)}

    def options(operation: str, settings: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **write_options(table, table_type, spec, operation, table_version),
            **(settings or {}),
        }

    match step:
        case sc.Insert(rows=rows) if first:
            seed = options("bulk_insert", seed_settings(len(rows)))
            return [
                *_write(before.schema, rows, seed, "overwrite", len(rows)),
                _sql(f"DROP TABLE IF EXISTS {quote(table)}", common),
                _sql(f"CREATE TABLE {quote(table)} USING hudi LOCATION '{{PATH}}'", common),
            ]
        case sc.Insert(rows=rows, settings=settings):
            return _write(before.schema, rows, options("insert", settings), "append")
        case sc.Upsert(rows=rows, schema_=declared, settings=settings):
            schema = schema_of(declared) if declared else before.schema
            return _write(schema, rows, options("upsert", settings), "append")
        case sc.Delete(keys=keys):
            key_type = before.schema.column(spec.key).type
            doomed = [before.rows[coerce(k, key_type)] for k in keys]
            return _write(before.schema, doomed, options("delete"), "append")
        case sc.Compaction() if table_type == "mor":
            statement = compaction_statement("{PATH}")
            return [_sql(statement, {**common, **COMPACTION_SETTINGS})]
        case sc.Compaction():
            return ["# (a copy-on-write table has nothing to compact)"]
        case sc.Clustering():
            return [_sql(clustering_statement("{PATH}"), common)]
        case _:
            return [_sql(ddl(table, step), {**common, **DDL_SETTINGS})]


def _write(
    schema: Any, rows: list[dict[str, Any]], options: dict[str, str], mode: str, parts: int = 0
) -> list[str]:
    ddl_schema, values = frame_input(schema, rows)
    lines = [
        "write(",
        f"    {literal(values, '    ')},",
        f"    {ddl_schema!r},",
        f"    {literal(options, '    ')},",
        f"    {mode!r},",
    ]
    if parts:
        lines.append(f"    partitions={parts},")
    return ["\n".join([*lines, ")"])]


def _sql(statement: str, settings: dict[str, str]) -> str:
    """`sql(...)`; where the statement names the table's path, the script's PATH goes in."""
    spelled = " + PATH + ".join(repr(part) for part in statement.split("{PATH}"))
    return f"sql({spelled}, {source(settings)})"
