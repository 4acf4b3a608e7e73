"""The Iceberg release a run writes with, and Iceberg's Spark runtime jar of a release (what the
writer's and the Spark reader's sessions load to write and read Iceberg tables)."""

from __future__ import annotations

from lakecompat.engines.infra.artifacts import MavenArtifact, ProvisioningError

#: The Iceberg release whose Spark runtime writes Iceberg tables (see docs/research/iceberg.md).
DEFAULT_ICEBERG_VERSION = "1.10.0"


ICEBERG_VERSION_ENV = "LAKECOMPAT_ICEBERG_VERSION"
#: The format version Iceberg tables are created in unless a run asks for another (the table
#: type sets how changes are written), and the versions the writer can be asked for: 2
#: (position-delete files) and 3 (deletion vectors). Version 1 has no row-level deletes.
DEFAULT_FORMAT_VERSION = "2"
FORMAT_VERSIONS = ("2", "3")


def iceberg_spark_runtime(version: str) -> MavenArtifact:
    """Iceberg's runtime jar for the installed Spark 3.5 (Scala 2.12): one jar, no dependencies."""
    return MavenArtifact("org.apache.iceberg", "iceberg-spark-runtime-3.5_2.12", version)


def check_format_version(release: str, format_version: str, setting: str) -> None:
    """`ProvisioningError` naming `setting` when the writer (of any `release`) cannot create
    tables in `format_version`."""
    if format_version not in FORMAT_VERSIONS:
        raise ProvisioningError(
            f"{setting}: the Iceberg writer creates tables in format version "
            f"{' or '.join(FORMAT_VERSIONS)} (merge-on-read tables need row-level deletes, "
            "which format version 1 lacks)"
        )
