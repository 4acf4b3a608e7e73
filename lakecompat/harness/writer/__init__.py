"""Writers: one per table format, behind the interface in `base.py`; registered here by name."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakecompat.engines.spark.runtime import SparkRuntime
    from lakecompat.harness.scenario.model import Scenario
    from lakecompat.harness.writer.base import TableWriter

#: Table formats by name: the module and class of their writer (imported on first use).
FORMATS = {
    "hudi": "lakecompat.harness.writer.hudi.writer:HudiWriter",
    "iceberg": "lakecompat.harness.writer.iceberg.writer:IcebergWriter",
    "delta": "lakecompat.harness.writer.delta.writer:DeltaWriter",
}


def writer_class(table_format: str) -> type[TableWriter]:
    """The writer class of `table_format`; ValueError names the known formats."""
    try:
        module_name, class_name = FORMATS[table_format].split(":")
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"unknown table format {table_format!r}; known formats: {known}") from None
    return getattr(importlib.import_module(module_name), class_name)


def format_lacks(table_format: str, scenario: Scenario) -> str | None:
    """Why `table_format` has no table of `scenario` (a step only another format has), or
    None."""
    return writer_class(table_format).not_applicable(scenario)


def create_writer(
    runtime: SparkRuntime,
    tables_dir: Path,
    step_timeout: float = 0,
    table_format: str = "hudi",
    cache: Path | None = None,
    table_version: str | None = None,
    release: str | None = None,
) -> TableWriter:
    """The writer of `table_format`, writing through `runtime` into `tables_dir`; with `cache`
    (the table cache's folder), tables written before are read from there. `table_version`:
    the format's table version to write (its `TableFormat.version_option`); None: the
    release's own. `release`: the format's release to write with (None: the default)."""
    cls = writer_class(table_format)
    writer = cls(runtime, tables_dir, step_timeout, table_version, release)
    if cache is None:
        return writer
    from lakecompat.harness.writer.cache import CachedWriter

    return CachedWriter(writer, cache)
