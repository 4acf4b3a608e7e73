"""The keys `--set trino:KEY=VALUE` takes, checked before Trino starts.

The reader sends every setting as a session property of its queries, and Trino fails a query
that names a property it does not have, so a wrong key would fail every cell. The run's catalogs
are those its own coordinator gets (`engines.trino.reader.catalogs`), and each key must be:

- `catalog`: the catalog to query in, one of them;
- a name without a dot: a system session property, one that trino-main's
  `SystemSessionProperties` defines;
- `<catalog>.<name>`: a session property of that catalog's connector, one that its plugin's
  `*SessionProperties` class defines (`HudiSessionProperties`, ...).

Both come from the jars of the Trino release the run starts. An attached coordinator's release
and catalogs are its own: its keys are taken unchecked.
"""

from __future__ import annotations

import functools

from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.settings import (
    Keys,
    SettingsScope,
    check_session_settings,
    session_properties,
)
from lakecompat.engines.trino.runtime import DEFAULT_TRINO_VERSION

HELP = (
    "Trino: system session properties, <catalog>.<property> of its catalogs and "
    "catalog=<catalog>, checked against the Trino release's jars"
)
#: The class of each connector that defines its session properties, and its jar.
_PROPERTIES = {
    "hudi": ("trino-hudi", "io/trino/plugin/hudi/HudiSessionProperties"),
    "hive": ("trino-hive", "io/trino/plugin/hive/HiveSessionProperties"),
    "iceberg": ("trino-iceberg", "io/trino/plugin/iceberg/IcebergSessionProperties"),
}


def check_trino_settings(
    settings: dict[str, str], scope: SettingsScope, files: dict[str, dict[str, str]]
) -> dict[str, str]:
    """Refuse a key the run's Trino, with the catalog files `files`, does not take
    (`SettingError`); an attached Trino's keys are returned, unchecked."""
    if scope.attachments.trino:
        return dict.fromkeys(settings, "the attached Trino's release and catalogs are its own")
    version = scope.release(DEFAULT_TRINO_VERSION)
    check_session_settings(
        "trino",
        settings,
        lambda: _system(version),
        {
            name: functools.partial(_catalog, version, name, properties["connector.name"])
            for name, properties in files.items()
        },
    )
    return {}


def _system(version: str) -> Keys:
    jar = MavenArtifact("io.trino", "trino-main", version)
    return session_properties(
        jar, "io/trino/SystemSessionProperties", f"a system session property of Trino {version}"
    )


def _catalog(version: str, catalog: str, connector: str) -> Keys:
    artifact, class_name = _PROPERTIES[connector]
    what = f"a session property of catalog {catalog} in Trino {version}"
    return session_properties(MavenArtifact("io.trino", artifact, version), class_name, what)
