"""The tables of a reproduction (expected and actual) as CSV files and Markdown."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakecompat.engines.answers import nested_as_json
from lakecompat.harness.scenario.compare import data_columns

#: Rows of each table shown in ISSUE.md (the CSV files hold them all).
SHOWN_ROWS = 20


def data_rows(table: pa.Table, key: str) -> pa.Table:
    """The data columns, nested values as JSON text, sorted by the key where it is there."""
    shown = nested_as_json(data_columns(table))
    if key in shown.column_names:
        with contextlib.suppress(pa.ArrowException):
            shown = shown.sort_by(key)
    return shown


def write_csv(path: Path, table: pa.Table, key: str) -> None:
    """Data columns as CSV; nested values as JSON text, missing values as empty fields."""
    shown = data_rows(table, key)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(shown.column_names)
        for row in shown.to_pylist():
            out.writerow(["" if v is None else text(v) for v in row.values()])


def text(value: Any) -> str:
    """A value as the CSV files and ISSUE.md show it."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def markdown(table: pa.Table, key: str) -> str:
    """The first `SHOWN_ROWS` rows as a Markdown table (NULL for a missing value)."""
    shown = data_rows(table, key)
    rows = shown.to_pylist()[:SHOWN_ROWS]
    head = "| " + " | ".join(shown.column_names) + " |\n"
    head += "|" + "---|" * len(shown.column_names) + "\n"
    body = "".join(
        "| " + " | ".join("NULL" if v is None else text(v) for v in row.values()) + " |\n"
        for row in rows
    )
    more = (
        f"\n({shown.num_rows - SHOWN_ROWS} more rows in the CSV file)\n"
        if shown.num_rows > SHOWN_ROWS
        else ""
    )
    return head + body + more
