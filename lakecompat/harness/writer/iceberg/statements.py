"""What the Iceberg writer says to Spark: the table's properties, and the SQL of each step.

Data steps are SQL over a temporary view of the step's rows (`INSERT INTO ... BY NAME`,
`MERGE INTO` for an upsert, `DELETE FROM ... WHERE key IN`); schema changes are the same
`ALTER TABLE` statements as for Hudi (`harness.writer.spark_sql`), on Iceberg's catalog.
"""

from __future__ import annotations

from lakecompat.harness.scenario import model as sc
from lakecompat.harness.writer.spark_sql import (
    SOURCE_VIEW,
    delete_statement,
    describe_rows,
    hudi_only_step,
    insert_statement,
    merge_statement,
    quote,
)
from lakecompat.harness.writer.spark_sql import create_statement as create_table

__all__ = [
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

#: A merge-on-read table writes delete files for its deletes, updates and merges (position
#: deletes in format version 2, deletion vectors in 3); copy-on-write rewrites the data files
#: they touch, Iceberg's default.
MERGE_ON_READ = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
COPY_ON_WRITE = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}

#: The seed rows' write keeps its input's partitioning: one data file per row, so that the rows
#: a later step does not touch keep the files written before a schema change, as in a real
#: table of many files. Later writes keep Iceberg's defaults.
SEED_WRITE_OPTIONS = {"distribution-mode": "none", "fanout-enabled": "true"}


def table_properties(table_type: str, format_version: str) -> dict[str, str]:
    """The `TBLPROPERTIES` a table is created with."""
    modes = MERGE_ON_READ if table_type == "mor" else COPY_ON_WRITE
    return {"format-version": format_version, **modes}


def table_identifier(catalog: str, namespace: str, name: str) -> str:
    """`catalog`.`namespace`.`name`, quoted for Spark SQL."""
    return f"{catalog}.{quote(namespace)}.{quote(name)}"


def not_applicable(spec: sc.ScenarioSpec) -> str | None:
    """Why a scenario has no Iceberg table (a step only Hudi has), or None."""
    return hudi_only_step(spec, "Iceberg")


def create_statement(
    identifier: str,
    columns: list[tuple[str, str]],
    partition_by: list[str],
    properties: dict[str, str],
) -> str:
    """`CREATE TABLE ... USING iceberg` with the seed rows' columns (name, Spark SQL type)."""
    return create_table(identifier, columns, partition_by, properties, "iceberg")
