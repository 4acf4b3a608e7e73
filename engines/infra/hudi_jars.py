"""The Hudi release a run writes with, and the Hudi Spark bundle of a release (the jars the
writer, the Spark reader and HiveServer2 load).
"""

from __future__ import annotations

import os

from engines.infra.artifacts import MavenArtifact, check_release

DEFAULT_HUDI_VERSION = "1.2.0"


HUDI_VERSION_ENV = "LAKECOMPAT_HUDI_VERSION"


def hudi_version() -> str:
    """The Hudi release to write with: `$LAKECOMPAT_HUDI_VERSION`, else the default."""
    return os.environ.get(HUDI_VERSION_ENV) or DEFAULT_HUDI_VERSION


def hudi_bundle(version: str) -> MavenArtifact:
    """The Hudi bundle for the installed Spark 3.5 (Scala 2.12)."""
    return MavenArtifact("org.apache.hudi", "hudi-spark3.5-bundle_2.12", version)


def check_hudi_release(version: str, setting: str) -> None:
    """`ProvisioningError` in one sentence that starts with `setting` (how the user named the
    release) when Hudi has no release `version` with a bundle for this Spark."""
    check_release(hudi_bundle(version), setting, "Hudi")
