"""The keys `--set presto:KEY=VALUE` takes, checked before Presto starts.

As with Trino (see `engines.trino.settings`), every setting is a session property of the
reader's queries, which Presto fails when it has no such property. Each key must be `catalog`
(one of the run's catalogs, `catalogs`), a system session property (presto-main's
`SystemSessionProperties`), or `<catalog>.<name>` of that catalog's connector: its own
`*SessionProperties` class, and `HiveCommonSessionProperties` (presto-hive-common), whose
properties both the Hudi and the Hive connector add to their own.
"""

from __future__ import annotations

import functools

from lakecompat.engines.infra.artifacts import MavenArtifact
from lakecompat.engines.presto.runtime import PRESTO_VERSION, catalogs
from lakecompat.engines.settings import (
    Keys,
    SettingsScope,
    check_session_settings,
    session_properties,
)

HELP = (
    "Presto: system session properties, <catalog>.<property> of its catalogs and "
    "catalog=<catalog>, checked against Presto's jars"
)
_GROUP = "com.facebook.presto"
#: The class of each connector that defines its session properties, and its jar.
_PROPERTIES = {
    "hudi": ("presto-hudi", "com/facebook/presto/hudi/HudiSessionProperties"),
    "hive-hadoop2": ("presto-hive", "com/facebook/presto/hive/HiveSessionProperties"),
}
_COMMON = ("presto-hive-common", "com/facebook/presto/hive/HiveCommonSessionProperties")


def check_presto_settings(settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
    """Refuse a key the run's Presto does not take (`SettingError`)."""
    check_session_settings(
        "presto",
        settings,
        _system,
        {
            name: functools.partial(_catalog, name, properties["connector.name"])
            for name, properties in catalogs("").items()
        },
    )
    return {}


def _system() -> Keys:
    return session_properties(
        MavenArtifact(_GROUP, "presto-main", PRESTO_VERSION),
        "com/facebook/presto/SystemSessionProperties",
        f"a system session property of Presto {PRESTO_VERSION}",
    )


def _catalog(catalog: str, connector: str) -> Keys:
    what = f"a session property of catalog {catalog} in Presto {PRESTO_VERSION}"
    names: set[str] = set()
    for artifact, class_name in (_PROPERTIES[connector], _COMMON):
        jar = MavenArtifact(_GROUP, artifact, PRESTO_VERSION)
        names |= session_properties(jar, class_name, what).names
    return Keys(frozenset(names), what)
