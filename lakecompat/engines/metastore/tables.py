"""How the writer's tables are laid out in the Hive Metastore, and registering them over thrift.

The layout is the one Hudi's hive sync produces: a copy-on-write table is one Metastore table;
a merge-on-read table is two, `<table>_ro` (base files) and `<table>_rt` (base and log files).
HiveServer2 registers them with DDL (engines.hive); engines without HiveServer2, such as Trino,
register the same layout directly through the Metastore's thrift API.
"""

from __future__ import annotations

import contextlib
import copy
import re
import time
from typing import Any
from urllib.parse import urlsplit

from lakecompat.engines.formats import FORMATS
from lakecompat.engines.table import TableRef

SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"


def hive_tables(table: TableRef) -> dict[str, str]:
    """The Metastore table behind each query type, named as the format syncs them (Hudi's hive
    sync: `_ro` and `_rt` for a merge-on-read table); a plain Parquet table is one table."""
    kind = FORMATS.get(table.format)
    synced = kind.synced_tables.get(table.table_type) if kind else None
    if synced:
        return {query_type: f"{table.name}{suffix}" for query_type, suffix in synced.items()}
    return {"snapshot": table.name}


def hive_type(spark_type: str) -> str:
    """A Spark type string as a Hive column type: Hive has no TIMESTAMP_NTZ, and Hudi's hive
    sync registers it as TIMESTAMP, like Spark's TIMESTAMP."""
    return re.sub(r"\btimestamp_ntz\b", "timestamp", spark_type)


def data_columns(table: TableRef) -> list[tuple[str, str]]:
    """The table's columns without its partition columns (those are partition keys)."""
    return [(n, hive_type(k)) for n, k in table.columns if n not in table.partition_by]


def partition_columns(table: TableRef) -> list[tuple[str, str]]:
    """The partition keys, typed as in the table's schema."""
    types = dict(table.columns)
    return [(name, hive_type(types.get(name, "string"))) for name in table.partition_by]


def partition_values(table: TableRef) -> list[tuple[str, dict[str, str]]]:
    """Each partition folder with its values: `("a=1/b=x", {"a": "1", "b": "x"})`."""
    found = []
    for folder in table.partitions:
        values = dict(part.split("=", 1) for part in folder.split("/"))
        found.append((folder, values))
    return found


def partition_location(table: TableRef, folder: str) -> str:
    """The location of a partition folder; `=` stays as is (Hive's own folder names)."""
    return f"file://{table.path / folder}"


def table_for(table: TableRef, query_type: str) -> str:
    """The Metastore table a query type reads: incremental and time travel use the snapshot one."""
    tables = hive_tables(table)
    return tables.get(query_type, tables["snapshot"])


def input_format(table: TableRef, query_type: str) -> str:
    """The Hive input format of the Metastore table that serves `query_type`."""
    if table.format == "parquet":
        return PARQUET_INPUT_FORMAT
    if table.table_type == "mor" and query_type == "snapshot":
        return REALTIME_INPUT_FORMAT
    return INPUT_FORMAT


def serde_parameters(table: TableRef, query_type: str) -> dict[str, str]:
    """SerDe properties Hudi's hive sync sets (none for plain Parquet)."""
    if table.format == "parquet":
        return {}
    read_optimized = "true" if query_type == "read_optimized" else "false"
    return {"hoodie.query.as.ro.table": read_optimized, "path": table.path.as_uri()}


def create_database(client: Any, database: str, location: str) -> None:
    """Create `database` (its location: `location`) unless it exists."""
    from hmsclient.genthrift.hive_metastore import ttypes

    with contextlib.suppress(ttypes.AlreadyExistsException):
        client.create_database(
            ttypes.Database(
                name=database,
                description="tables of one lakecompat run",
                locationUri=location,
                parameters={},
            )
        )


def drop_database(metastore_uri: str, database: str) -> None:
    """Drop `database` and its tables from the Metastore; the table files stay."""
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore import ttypes

    address = urlsplit(metastore_uri)
    with (
        hmsclient.HMSClient(host=address.hostname, port=address.port) as client,
        contextlib.suppress(ttypes.NoSuchObjectException),
    ):
        client.drop_database(database, False, True)


def register_over_thrift(metastore_uri: str, table: TableRef, database: str = "default") -> None:
    """Drop and create the Metastore tables of `table` in `database` through the thrift API
    (the database is created first when it is missing, located at the table's folder)."""
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore import ttypes

    address = urlsplit(metastore_uri)
    columns = [ttypes.FieldSchema(name=name, type=kind) for name, kind in data_columns(table)]
    keys = [ttypes.FieldSchema(name=name, type=kind) for name, kind in partition_columns(table)]
    now = int(time.time())
    with hmsclient.HMSClient(host=address.hostname, port=address.port) as client:
        if database != "default":
            create_database(client, database, table.path.parent.as_uri())
        for query_type, name in hive_tables(table).items():
            with contextlib.suppress(ttypes.NoSuchObjectException):
                client.drop_table(database, name, False)
            storage = ttypes.StorageDescriptor(
                cols=columns,
                location=table.path.as_uri(),
                inputFormat=input_format(table, query_type),
                outputFormat=OUTPUT_FORMAT,
                compressed=False,
                numBuckets=-1,
                serdeInfo=ttypes.SerDeInfo(
                    serializationLib=SERDE, parameters=serde_parameters(table, query_type)
                ),
                bucketCols=[],
                sortCols=[],
                parameters={},
            )
            client.create_table(
                ttypes.Table(
                    tableName=name,
                    dbName=database,
                    owner="lakecompat",
                    createTime=now,
                    lastAccessTime=0,
                    retention=0,
                    sd=storage,
                    partitionKeys=keys,
                    parameters={"EXTERNAL": "TRUE"},
                    tableType="EXTERNAL_TABLE",
                )
            )
            for folder, values in partition_values(table):
                located = copy.copy(storage)
                located.location = partition_location(table, folder)
                # HMSClient.add_partition takes (table, values) and builds its own partition
                # without our location; the thrift call takes the Partition itself.
                super(hmsclient.HMSClient, client).add_partition(
                    ttypes.Partition(
                        values=[values[k] for k in table.partition_by],
                        dbName=database,
                        tableName=name,
                        createTime=now,
                        lastAccessTime=0,
                        sd=located,
                        parameters={},
                    )
                )
