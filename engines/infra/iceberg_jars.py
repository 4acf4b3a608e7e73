"""The Iceberg release a run writes with, and Iceberg's Spark runtime jar of a release (what the
writer's and the Spark reader's sessions load to write and read Iceberg tables)."""

from __future__ import annotations

import os

from engines.infra.artifacts import MavenArtifact

#: The Iceberg release whose Spark runtime writes Iceberg tables (see docs/research/iceberg.md).
DEFAULT_ICEBERG_VERSION = "1.10.0"


ICEBERG_VERSION_ENV = "LAKECOMPAT_ICEBERG_VERSION"


def iceberg_version() -> str:
    """The Iceberg release to write with: `$LAKECOMPAT_ICEBERG_VERSION`, else the default."""
    return os.environ.get(ICEBERG_VERSION_ENV) or DEFAULT_ICEBERG_VERSION


def iceberg_spark_runtime(version: str) -> MavenArtifact:
    """Iceberg's runtime jar for the installed Spark 3.5 (Scala 2.12): one jar, no dependencies."""
    return MavenArtifact("org.apache.iceberg", "iceberg-spark-runtime-3.5_2.12", version)
