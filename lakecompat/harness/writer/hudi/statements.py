"""What the Hudi writer says to Spark: the datasource options of each write, and the SQL of
schema changes, compaction and clustering (shared by the writer and its standalone script).
"""

from __future__ import annotations

from typing import Any

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.scenario.shapes import changes, field_changes
from lakecompat.harness.writer.spark_sql import ddl, frame_input, quote, quote_path

__all__ = ["ddl", "frame_input", "quote", "quote_path"]

DDL_WORKAROUND = {"hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true"}


#: Settings of every write and every SQL statement. Hudi's embedded timeline server (an HTTP
#: server per write, listening on every interface) only serves executors a cached view of the
#: files; Spark runs in one JVM here, so without it writes are about 13 % faster and the
#: tables the same.
WRITE_SETTINGS = {"hoodie.embed.timeline.server": "false"}


def version_settings(table_version: str | None) -> dict[str, str]:
    """The settings that make Hudi 1.x write and keep table version `table_version` (6: what
    Hudi 0.14/0.15 readers read), as Hudi's migration guide has a writer set them while its
    readers are older (apache/hudi#12615); none for the release's own version."""
    if not table_version:
        return {}
    return {"hoodie.write.table.version": table_version, "hoodie.write.auto.upgrade": "false"}


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


#: A schema change's statement runs with schema-on-read and the workaround above.
DDL_SETTINGS = {"hoodie.schema.on.read.enable": "true", **DDL_WORKAROUND}


#: Parquet's writer settings (Hadoop configuration, read by Hudi's Parquet writer since 0.14)
#: that write a bloom filter for one column: `#` and the column's name follow each key. The
#: expected number of distinct values sizes the filter (without it, 1 MB per column and file).
BLOOM_FILTER_ENABLED = "parquet.bloom.filter.enabled"
BLOOM_FILTER_NDV = "parquet.bloom.filter.expected.ndv"


def bloom_filter_columns(spec: sc.ScenarioSpec) -> tuple[str, ...]:
    """The columns whose Parquet files get a bloom filter: the record key and every column (or
    field inside a struct, `point.x`) a step changes, under each name it has had, so that
    readers that prune row groups with bloom filters probe filters written before the
    change."""
    names = {spec.key, *(c.column for c in [*changes(spec), *field_changes(spec)])}
    for step in reversed(spec.steps):
        if not isinstance(step, sc.RenameColumn):
            continue
        parent = step.column.rsplit(".", 1)[0] + "." if "." in step.column else ""
        if parent + step.to in names:
            names.add(step.column)
    return (spec.key, *sorted(names - {spec.key}))


def bloom_filter_settings(spec: sc.ScenarioSpec) -> dict[str, str]:
    """The Hadoop settings that write `bloom_filter_columns`' bloom filters, sized for the
    scenario's rows."""
    distinct = str(max(len(spec.rows), 1) * 4)
    settings = {}
    for name in bloom_filter_columns(spec):
        settings[f"{BLOOM_FILTER_ENABLED}#{name}"] = "true"
        settings[f"{BLOOM_FILTER_NDV}#{name}"] = distinct
    return settings


#: Hudi schedules a compaction after 5 delta commits; a scenario asks for it now.
COMPACTION_SETTINGS = {"hoodie.compact.inline.max.delta.commits": "1"}


def compaction_statement(path: str) -> str:
    """The procedure call that compacts a merge-on-read table now."""
    return f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}')"


def clustering_statement(path: str) -> str:
    """The procedure call that clusters a table now."""
    return f"CALL run_clustering(path => '{path}')"


def write_options(
    table_name: str,
    table_type: str,
    spec: sc.ScenarioSpec,
    operation: str,
    table_version: str | None = None,
) -> dict[str, str]:
    """The Hudi datasource options of one DataFrame write (before a step's own settings)."""
    ordering = spec.ordering(HUDI.name)
    return {
        **WRITE_SETTINGS,
        **version_settings(table_version),
        "hoodie.table.name": table_name,
        "hoodie.datasource.write.table.type": TABLE_TYPE_NAMES[table_type],
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.recordkey.field": spec.key,
        # The scenario's ordering field for Hudi (always given: `TableFormat.ordering_required`).
        **({"hoodie.datasource.write.precombine.field": ordering} if ordering else {}),
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


def describe_write(
    operation: str, rows: list[Any], schema: Schema, settings: dict[str, str] | None = None
) -> str:
    """A comment line standing for a DataFrame write in the writer's evidence."""
    columns = ", ".join(f"{c.name} {c.type.spark_sql()}" for c in schema.columns)
    extra = "".join(f"; {key}={value}" for key, value in (settings or {}).items())
    return (
        f"-- DataFrame write, Hudi operation {operation}: {len(rows)} row(s) of ({columns})" + extra
    )
