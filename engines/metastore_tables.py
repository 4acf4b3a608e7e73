"""How the writer's tables are laid out in the Hive Metastore, and registering them over thrift.

The layout is the one Hudi's hive sync produces: a copy-on-write table is one Metastore table;
a merge-on-read table is two, `<table>_ro` (base files) and `<table>_rt` (base and log files).
HiveServer2 registers them with DDL (engines.hive); engines without HiveServer2, such as Trino,
register the same layout directly through the Metastore's thrift API.
"""

from __future__ import annotations

import contextlib
import time
from urllib.parse import urlsplit

from engines.base import TableRef

SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
DATABASE = "default"


def hive_tables(table: TableRef) -> dict[str, str]:
    """The Metastore table behind each query type, named the way Hudi's hive sync names them."""
    if table.format == "hudi" and table.table_type == "mor":
        return {"read_optimized": f"{table.name}_ro", "snapshot": f"{table.name}_rt"}
    return {"snapshot": table.name}


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


def register_over_thrift(metastore_uri: str, table: TableRef) -> None:
    """Drop and create the Metastore tables of `table` through the thrift API."""
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore import ttypes

    address = urlsplit(metastore_uri)
    columns = [ttypes.FieldSchema(name=name, type=kind) for name, kind in table.columns]
    now = int(time.time())
    with hmsclient.HMSClient(host=address.hostname, port=address.port) as client:
        for query_type, name in hive_tables(table).items():
            with contextlib.suppress(ttypes.NoSuchObjectException):
                client.drop_table(DATABASE, name, False)
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
                    dbName=DATABASE,
                    owner="lakecompat",
                    createTime=now,
                    lastAccessTime=0,
                    retention=0,
                    sd=storage,
                    partitionKeys=[],
                    parameters={"EXTERNAL": "TRUE"},
                    tableType="EXTERNAL_TABLE",
                )
            )
