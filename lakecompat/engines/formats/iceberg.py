"""Apache Iceberg as a table format (its writer: `harness/writer/iceberg/`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakecompat.engines.formats.model import TableFormat
from lakecompat.engines.infra.iceberg_jars import (
    DEFAULT_FORMAT_VERSION,
    DEFAULT_ICEBERG_VERSION,
    ICEBERG_VERSION_ENV,
    check_format_version,
    iceberg_spark_runtime,
)

#: Iceberg has no read-optimized view (a merge-on-read table's delete files always apply).
#: Its incremental read is an append scan (Spark's `start-snapshot-id`, PyIceberg's
#: `incremental_append_scan`): the rows the `append` snapshots after the reference added, as
#: they were written, not Hudi's "every row written since". Time travel goes to a snapshot by
#: its id (`time_travel`) or by a time (`time_travel_timestamp`: the table as it was at a
#: moment after the reference commit). A changelog read (Spark's `create_changelog_view`,
#: Trino's `table_changes`) returns each row every snapshot after the reference inserted or
#: deleted, an update as both.
QUERY_TYPES = ("snapshot", "incremental", "time_travel", "time_travel_timestamp", "changelog")


def _writer_words(writer: Mapping[str, Any]) -> str:
    """`Spark 3.5.3 + Iceberg 1.10.0 writing format version 2`."""
    text = f"Spark {writer.get('spark', '?')} + Iceberg {writer.get('iceberg', '?')}"
    return text + f" writing format version {writer.get('format_version', '?')}"


ICEBERG = TableFormat(
    name="iceberg",
    title="Iceberg",
    query_types={"cow": QUERY_TYPES, "mor": QUERY_TYPES},
    metadata_folder="metadata",
    version_option="format_version",
    partitions_last=False,
    attachable=False,
    synced_tables={},
    named_in_kinds=True,
    tables_subfolder="iceberg",
    create_words="create the table and append {rows} rows",
    commit_words="one Iceberg snapshot for each write (a schema change commits none)",
    history_query_types=QUERY_TYPES[1:],
    reference_words=(
        "The query names a snapshot of the table as it was first written (its id, or a "
        "moment after its commit); a table written again has snapshots of its own: take "
        "them from its `snapshots` metadata table, the snapshot before the first schema "
        "change (a changelog query also names the current snapshot, where it ends)."
    ),
    writer_words=_writer_words,
    default_release=DEFAULT_ICEBERG_VERSION,
    release_env=ICEBERG_VERSION_ENV,
    release_help="the Iceberg release Spark writes Iceberg tables with and Spark reads them "
    "with (iceberg-spark-runtime-3.5_2.12)",
    release_artifact=iceberg_spark_runtime,
    default_version=DEFAULT_FORMAT_VERSION,
    check_version=check_format_version,
    version_help="the Iceberg format version the writer creates tables in: 2 (the default; "
    "deletes as position-delete files) or 3 (deletion vectors instead)",
    # A scenario gives Iceberg nothing of its own. It has no ordering field: its writer's
    # upserts (`MERGE INTO`) keep the rule of the ordering field the scenario gives Hudi, so
    # that one oracle holds for both formats. Its writer takes no step settings: its writes are
    # SQL statements, which take no per-write options (a step with settings has no Iceberg
    # table).
    writer_option_prefix="",
    ordering_field="",
)
