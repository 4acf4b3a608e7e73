"""Delta Lake as a table format (its writer: `harness/writer/delta/`).

A Delta table's changes are table features its readers must support: column mapping (a rename
or a drop needs it), deletion vectors (deletes and updates as bitmaps beside the data files),
type widening (a type change needs it) and the change data feed. The writer turns each on
where the scenario needs it, as Delta's users do: column mapping in the run's mode
(`--column-mapping`, `name` by default) on a table whose scenario renames or drops a column,
type widening on one whose scenario changes a type; deletion vectors on a merge-on-read table
(`mor`), where a copy-on-write one (`cow`) rewrites the files its deletes and updates touch;
the change data feed on every table. Each table's protocol and features are in its evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakecompat.engines.formats.model import TableFormat
from lakecompat.engines.infra.delta_jars import (
    DEFAULT_COLUMN_MAPPING,
    DEFAULT_DELTA_VERSION,
    DELTA_VERSION_ENV,
    check_column_mapping,
    delta_spark,
)

#: Delta has no read-optimized view (deletion vectors always apply) and no incremental batch
#: read of its own (its streaming source is not a query). Time travel goes to a version of the
#: table (`time_travel`) or to a moment (`time_travel_timestamp`: after the reference commit,
#: before the next). A changelog read is the change data feed from the version after the
#: reference: each row inserted or deleted, an update as its pre- and post-image.
QUERY_TYPES = ("snapshot", "time_travel", "time_travel_timestamp", "changelog")


def _writer_words(writer: Mapping[str, Any]) -> str:
    """`Spark 3.5.3 + Delta 3.3.2 with column mapping name`."""
    text = f"Spark {writer.get('spark', '?')} + Delta {writer.get('delta', '?')}"
    return text + f" with column mapping {writer.get('column_mapping', '?')}"


DELTA = TableFormat(
    name="delta",
    title="Delta",
    query_types={"cow": QUERY_TYPES, "mor": QUERY_TYPES},
    metadata_folder="_delta_log",
    version_option="column_mapping",
    partitions_last=False,
    attachable=False,
    synced_tables={},
    named_in_kinds=True,
    tables_subfolder="delta",
    create_words="create the table and append {rows} rows",
    commit_words="one Delta commit (table version) for each write and each schema change",
    history_query_types=QUERY_TYPES[1:],
    reference_words=(
        "The query names a version of the table as it was first written (its number, or a "
        "moment after its commit); a table written again has the same versions if its steps "
        "are the same: check them with `DESCRIBE HISTORY delta.`<path>``, the version before "
        "the first schema change (a changelog query reads the change data feed from the "
        "version after it)."
    ),
    writer_words=_writer_words,
    default_release=DEFAULT_DELTA_VERSION,
    release_env=DELTA_VERSION_ENV,
    release_help="the Delta Lake release Spark writes Delta tables with and Spark reads them "
    "with: 3.x on Spark 3.5 (delta-spark_2.12), 4.0.x on Spark 4.0.1 (delta-spark_2.13, in a "
    "Python environment of its own, installed on first use)",
    release_artifact=delta_spark,
    version_help="the column mapping mode of the Delta tables whose scenario renames or drops a "
    "column: name (the default), id, or none (the rename or drop is then refused, as Delta "
    "refuses it)",
    version_metavar="MODE",
    default_version=DEFAULT_COLUMN_MAPPING,
    check_version=check_column_mapping,
    # A scenario gives Delta nothing of its own: its upserts (`MERGE INTO`) keep the rule of
    # the ordering field the scenario gives Hudi, as Iceberg's do; its writes are SQL
    # statements, which take no per-write options.
    writer_option_prefix="",
    ordering_field="",
)
