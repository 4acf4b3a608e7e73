"""What the Delta writer says to Spark: the table's properties, and the SQL of each step.

Tables are named by their folder (delta.`<path>`). Data steps are SQL over a temporary view of
the step's rows (`INSERT INTO ... BY NAME`, `MERGE INTO` for an upsert, `DELETE FROM ... WHERE
key IN`); schema changes are the same `ALTER TABLE` statements as for the other formats
(`harness.writer.spark_sql`). An upsert with a schema of its own merges with Delta's schema
evolution on (`spark.databricks.delta.schema.autoMerge.enabled`), as Delta's users evolve a
table through `MERGE`.
"""

from __future__ import annotations

from pathlib import Path

from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.oracle import evolve, schema_of
from lakecompat.harness.writer.spark_sql import (
    SOURCE_VIEW,
    describe_rows,
    hudi_only_step,
    insert_statement,
    merge_statement,
    quote,
)
from lakecompat.harness.writer.spark_sql import create_statement as create_table

__all__ = [
    "AUTO_MERGE",
    "SOURCE_VIEW",
    "create_statement",
    "delete_statement",
    "describe_rows",
    "insert_statement",
    "merge_statement",
    "not_applicable",
    "table_identifier",
    "table_properties",
]

#: The session setting under which `MERGE INTO` adds the source's new columns to the table.
AUTO_MERGE = "spark.databricks.delta.schema.autoMerge.enabled"


def table_identifier(path: Path) -> str:
    """The table as Spark SQL names a Delta table by its folder: delta.`<path>`."""
    return f"delta.{quote(str(path))}"


def widens_types(spec: sc.ScenarioSpec) -> bool:
    """Whether the scenario changes a column's type (Delta then needs type widening): a type
    change, or an upsert whose rows give a column of the table another type."""
    states = evolve(spec)
    for index, step in enumerate(spec.steps):
        if isinstance(step, sc.ChangeType):
            return True
        if isinstance(step, sc.Upsert) and step.schema_ is not None:
            before = states[index].schema
            for column in schema_of(step.schema_).columns:
                if column.name in before.names and before.column(column.name).type != column.type:
                    return True
    return False


def maps_columns(spec: sc.ScenarioSpec) -> bool:
    """Whether the scenario renames or drops a column (Delta then needs column mapping)."""
    return any(
        isinstance(step, sc.RenameColumn | sc.DropColumn | sc.DropColumns) for step in spec.steps
    )


def table_properties(table_type: str, column_mapping: str, spec: sc.ScenarioSpec) -> dict[str, str]:
    """The `TBLPROPERTIES` a table is created with, each feature where the scenario needs it,
    as Delta's users turn them on: column mapping in the run's mode where it renames or drops
    a column (Delta refuses both without it; mode `none`: never), deletion vectors for a
    merge-on-read table (a copy-on-write one rewrites the files its deletes and updates
    touch), the change data feed (for changelog reads; readers need not support it), and type
    widening where it changes a type (Delta refuses a type change without it)."""
    properties = {}
    if column_mapping != "none" and maps_columns(spec):
        properties["delta.columnMapping.mode"] = column_mapping
    properties["delta.enableDeletionVectors"] = "true" if table_type == "mor" else "false"
    properties["delta.enableChangeDataFeed"] = "true"
    if widens_types(spec):
        properties["delta.enableTypeWidening"] = "true"
    return properties


def not_applicable(spec: sc.ScenarioSpec) -> str | None:
    """Why a scenario has no Delta table (a step only another format has), or None."""
    for index, step in enumerate(spec.steps):
        if step.op in sc.PARTITION_OPS:
            return (
                f"steps[{index}] ({step.op}) is Iceberg's partition evolution; a Delta table's "
                "partition columns are fixed when it is created"
            )
    return hudi_only_step(spec, "Delta")


def create_statement(
    identifier: str,
    columns: list[tuple[str, str]],
    partition_by: list[str],
    properties: dict[str, str],
) -> str:
    """`CREATE TABLE ... USING delta` with the seed rows' columns (name, Spark SQL type)."""
    return create_table(identifier, columns, partition_by, properties, "delta")


def delete_statement(identifier: str, key: str) -> str:
    """Delete the rows whose key is in the source view: a `MERGE` that deletes the matched rows
    (Delta's `DELETE` takes no subquery in its condition)."""
    k = quote(key)
    return (
        f"MERGE INTO {identifier} t USING {SOURCE_VIEW} s ON t.{k} = s.{k} WHEN MATCHED THEN DELETE"
    )
