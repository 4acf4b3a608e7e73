"""The Delta Lake release a run writes with, Delta's Spark jars of a release, and the column
mapping modes its writer creates tables in (what the writer's and the Spark reader's sessions
load to write and read Delta tables; docs/research/delta.md)."""

from __future__ import annotations

from lakecompat.engines.infra.artifacts import MavenArtifact, ProvisioningError

#: The Delta Lake release whose Spark jars write Delta tables (the newest for Spark 3.5).
DEFAULT_DELTA_VERSION = "3.3.2"

DELTA_VERSION_ENV = "LAKECOMPAT_DELTA_VERSION"

#: How a Delta table maps its columns to the columns of its data files (the table property
#: `delta.columnMapping.mode`): `none` by name (a rename or a drop is refused), `name` by a
#: physical name of each column's own, `id` by Parquet field id. The writer creates a table
#: whose scenario renames or drops a column in the run's mode (`name` by default, so that the
#: catalog's renames and drops are made), every other table without.
COLUMN_MAPPING_MODES = ("none", "name", "id")
DEFAULT_COLUMN_MAPPING = "name"


def delta_spark(version: str) -> MavenArtifact:
    """Delta's Spark jar for the installed Spark 3.5 (Scala 2.12)."""
    return MavenArtifact("io.delta", "delta-spark_2.12", version)


def delta_storage(version: str) -> MavenArtifact:
    """Delta's storage jar (its log store), which `delta-spark` needs beside it."""
    return MavenArtifact("io.delta", "delta-storage", version)


def check_column_mapping(release: str, mode: str, setting: str) -> None:
    """`ProvisioningError` naming `setting` when the writer (of any `release`) cannot create
    tables in column mapping `mode`."""
    if mode not in COLUMN_MAPPING_MODES:
        raise ProvisioningError(
            f"{setting}: the Delta writer creates tables with column mapping "
            f"{', '.join(COLUMN_MAPPING_MODES[:-1])} or {COLUMN_MAPPING_MODES[-1]}, not {mode!r}"
        )
