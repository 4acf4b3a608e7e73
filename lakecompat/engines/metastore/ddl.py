"""A table's registration as HiveQL DDL (DROP and CREATE EXTERNAL TABLE, partitions), for
engines that register through SQL, such as HiveServer2, and for reproductions.
"""

from __future__ import annotations

from lakecompat.engines.metastore.tables import (
    OUTPUT_FORMAT,
    SERDE,
    data_columns,
    hive_tables,
    input_format,
    partition_columns,
    partition_location,
    partition_values,
    serde_parameters,
)
from lakecompat.engines.table import TableRef


def quote(identifier: str) -> str:
    """Backtick-quote a Hive identifier (Hive 4 rejects unquoted names starting with `_`)."""
    return "`" + identifier.replace("`", "``") + "`"


def registration_ddl(table: TableRef) -> list[str]:
    """DROP and CREATE EXTERNAL TABLE statements that make `table` readable by Hive."""
    columns = ", ".join(f"{quote(name)} {kind}" for name, kind in data_columns(table))
    keys = ", ".join(f"{quote(name)} {kind}" for name, kind in partition_columns(table))
    partitioned = f"PARTITIONED BY ({keys}) " if keys else ""
    location = table.path.as_uri()
    statements = []
    for query_type, name in hive_tables(table).items():
        statements.append(f"DROP TABLE IF EXISTS {quote(name)}")
        if table.format == "parquet":
            storage = "STORED AS PARQUET"
        else:
            properties = ", ".join(
                f"'{key}'='{value}'" for key, value in serde_parameters(table, query_type).items()
            )
            storage = (
                f"ROW FORMAT SERDE '{SERDE}' WITH SERDEPROPERTIES ({properties}) "
                f"STORED AS INPUTFORMAT '{input_format(table, query_type)}' "
                f"OUTPUTFORMAT '{OUTPUT_FORMAT}'"
            )
        statements.append(
            f"CREATE EXTERNAL TABLE {quote(name)} ({columns}) {partitioned}{storage} "
            f"LOCATION '{location}' TBLPROPERTIES ('EXTERNAL'='TRUE')"
        )
        for folder, values in partition_values(table):
            spec = ", ".join(f"{quote(k)}='{v}'" for k, v in values.items())
            statements.append(
                f"ALTER TABLE {quote(name)} ADD PARTITION ({spec}) "
                f"LOCATION '{partition_location(table, folder)}'"
            )
    return statements
