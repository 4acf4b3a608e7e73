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


#: The PySpark release each Delta release line runs on where it is not lakecompat's own Spark
#: 3.5 (Delta 3.x): Delta 4.0 is built for Spark 4.0 (Scala 2.13), which runs in a Python
#: environment of its own (docs/research/delta.md).
SPARK_OF_DELTA = {(4, 0): "4.0.1"}


def delta_pyspark(release: str) -> str:
    """The PySpark release whose Spark runs Delta `release`'s jars: "" for lakecompat's own
    (Spark 3.5, Delta 3.x), `4.0.1` for Delta 4.0.x. `ProvisioningError` for another line."""
    parts = [int(p) if p.isdigit() else -1 for p in [*release.split("."), "", ""][:2]]
    line = (parts[0], parts[1])
    if line[0] == 3:
        return ""
    if line in SPARK_OF_DELTA:
        return SPARK_OF_DELTA[line]
    known = ", ".join(f"Delta {a}.{b}.x on Spark {s}" for (a, b), s in SPARK_OF_DELTA.items())
    raise ProvisioningError(
        f"lakecompat runs Delta 3.x on its own Spark 3.5 and {known}; no Spark is known here "
        f"for Delta {release}"
    )


def delta_spark(version: str) -> MavenArtifact:
    """Delta's Spark jar of `version`, for the Spark it runs on: Scala 2.12 for Spark 3.5,
    2.13 for Spark 4."""
    scala = "2.13" if delta_pyspark(version) else "2.12"
    return MavenArtifact("io.delta", f"delta-spark_{scala}", version)


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
