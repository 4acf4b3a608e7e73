"""Apache Hudi as a table format (its writer: `harness/writer/hudi/`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakecompat.engines.formats.model import TableFormat
from lakecompat.engines.infra.hudi_jars import (
    DEFAULT_HUDI_VERSION,
    HUDI_VERSION_ENV,
    check_table_version,
    hudi_bundle,
    written_table_version,
)


def _writer_words(writer: Mapping[str, Any]) -> str:
    """`Spark 3.5.3 + Hudi 1.2.0`, and `writing table version 6` where the run chose one."""
    text = f"Spark {writer.get('spark', '?')} + Hudi {writer.get('hudi', '?')}"
    if writer.get("table_version"):
        text += f" writing table version {writer['table_version']}"
    return text


HUDI = TableFormat(
    name="hudi",
    title="Hudi",
    # Copy-on-write has no separate read-optimized view.
    query_types={
        "cow": ("snapshot", "incremental", "time_travel"),
        "mor": ("snapshot", "read_optimized", "incremental", "time_travel"),
    },
    metadata_folder=".hoodie",
    version_option="table_version",
    partitions_last=True,
    attachable=True,
    synced_tables={"mor": {"read_optimized": "_ro", "snapshot": "_rt"}},
    named_in_kinds=False,
    tables_subfolder="",
    create_words="insert {rows} rows (a bulk insert creates the table)",
    commit_words="one Hudi commit each",
    history_query_types=("incremental", "time_travel"),
    reference_words=(
        "The query names a commit time of the table as it was first written; a table "
        "written again has commits of its own: take the time from its timeline "
        "(`.hoodie/timeline/` in Hudi 1.x), the commit before the first schema change."
    ),
    writer_words=_writer_words,
    default_release=DEFAULT_HUDI_VERSION,
    release_env=HUDI_VERSION_ENV,
    release_help="the Hudi release Spark writes Hudi tables with (its Spark 3.5 bundle)",
    release_artifact=hudi_bundle,
    version_written=written_table_version,
    check_version=check_table_version,
    version_help="the Hudi table version the writer writes (hoodie.write.table.version; a Hudi "
    "1.x writer writes 6, 8 or 9; 6 keeps the tables readable by Hudi 0.14/0.15 readers; "
    "default: the writer release's own, 9 for Hudi 1.2)",
    meta_prefix="_hoodie_",
    writer_option_prefix="hoodie.",
    ordering_field="precombine field",
    ordering_required=True,
)
