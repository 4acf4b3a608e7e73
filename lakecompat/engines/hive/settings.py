"""The keys `--set hive:KEY=VALUE` takes, checked before HiveServer2 starts.

The reader SETs every setting in its session. HiveServer2 refuses a `hive.*` key that its
HiveConf does not define (`hive.conf.validation`, on by default), which would fail every cell,
and keeps any other key, known or not. So:

- `hive.*`: one of HiveConf's settings (the `hive.` literals of `HiveConf$ConfVars` in the
  `hive-common` jar of the Hive release the run starts); an attached HiveServer2's release is
  its own, so its keys are taken unchecked;
- `hoodie.*`: one of the Hudi options of the bundle HiveServer2 reads Hudi tables with (with
  its table-specific ones, `hoodie.<table>.consume.mode`);
- anything else (`mapreduce.*`, `parquet.*`): Hive hands it to the Hadoop configuration of its
  jobs, which takes any key, so it is taken unchecked.
"""

from __future__ import annotations

import functools

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.infra.artifacts import MavenArtifact, fetch
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.infra.jar_strings import jar_literals
from lakecompat.engines.settings import Keys, SettingsScope, hudi_keys, unknown_key

HELP = (
    "Hive: hive.* settings and hoodie.* Hudi options, checked against Hive's and Hudi's jars; "
    "other keys go to the Hadoop configuration of its jobs, unchecked"
)
TAKES = (
    "Hive takes hive.* settings of HiveConf, hoodie.* Hudi options, and other keys for the "
    "Hadoop configuration of its jobs"
)
_CONF_VARS = "org/apache/hadoop/hive/conf/HiveConf$ConfVars"


def check_hive_settings(
    settings: dict[str, str], scope: SettingsScope, version: str
) -> dict[str, str]:
    """Refuse a key HiveServer2 `version` does not take (`SettingError`); return those it
    takes unchecked, with why."""
    unchecked: dict[str, str] = {}
    for key in settings:
        if key.startswith("hive.") and scope.attachments.hiveserver2:
            unchecked[key] = "the attached HiveServer2's release is its own"
        elif key.startswith("hive."):
            known = _hive_settings(version)
            if key not in known:
                raise unknown_key("hive", key, known, TAKES)
        elif key.startswith("hoodie."):
            release = scope.reads_with(HUDI.name)
            hudi = hudi_keys(hudi_bundle(release), release)
            if key not in hudi:
                raise unknown_key("hive", key, hudi, TAKES)
        else:
            unchecked[key] = (
                "Hive hands keys outside hive.* and hoodie.* to the Hadoop configuration of its "
                "jobs, which takes any key"
            )
    return unchecked


@functools.cache
def _hive_settings(version: str) -> Keys:
    jar = fetch(MavenArtifact("org.apache.hive", "hive-common", version))
    names = jar_literals(jar, "hive.", classes=(_CONF_VARS,))
    return Keys(frozenset(n for n in names if " " not in n), f"a setting of Hive {version}")
