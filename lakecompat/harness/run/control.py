"""The control table: plain Parquet that every engine must read correctly before its cells count."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa

from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario.schema import Column, Schema
from lakecompat.harness.scenario.types import parse_type
from lakecompat.harness.writer.base import TableWriter

CONTROL_KEY = "id"
CONTROL_SCHEMA = Schema(
    tuple(
        Column(name, parse_type(type_))
        for name, type_ in (
            ("id", "int"),
            ("name", "string"),
            ("price", "double"),
            ("qty", "long"),
            ("day", "date"),
            # Precision above 18: Spark stores it as fixed-length bytes, which every reader
            # reads; Hive 3 reads no decimal Spark stores as a 32- or 64-bit integer (9 or 18
            # digits at most), and a control table must be one every reader can read.
            ("amount", "decimal(20,2)"),
            ("active", "boolean"),
        )
    )
)
CONTROL_ROWS = [
    {
        "id": 1,
        "name": "a",
        "price": 1.5,
        "qty": 10,
        "day": dt.date(2024, 1, 1),
        "amount": Decimal("12.50"),
        "active": True,
    },
    {
        "id": 2,
        "name": None,
        "price": 2.25,
        "qty": None,
        "day": dt.date(2024, 2, 29),
        "amount": Decimal("-3.05"),
        "active": False,
    },
]


def control_table(writer: TableWriter) -> tuple[TableRef, pa.Table]:
    """Write the control table and return it with the answer every engine must give."""
    table = writer.write_parquet("control_parquet", CONTROL_SCHEMA, CONTROL_ROWS, CONTROL_KEY)
    return table, pa.Table.from_pylist(CONTROL_ROWS, schema=CONTROL_SCHEMA.arrow())
