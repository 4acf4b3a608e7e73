"""The keys `--set flink:KEY=VALUE` takes, checked before Flink starts.

The reader gives every setting to the read as a table option (`/*+ OPTIONS(...) */`), and
Hudi's Flink connector takes any option there: one it does not know goes into Hudi's
configuration and is never read. So a key must be one of the connector's own options (the
literals of `FlinkOptions`, such as `read.start-commit`) or one of Hudi's `hoodie.*` options,
both from the Hudi Flink bundle the reader runs with.
"""

from __future__ import annotations

import functools
import re

from lakecompat.engines.flink.runtime import HUDI_VERSION, JARS
from lakecompat.engines.infra.artifacts import fetch
from lakecompat.engines.infra.jar_strings import jar_literals
from lakecompat.engines.settings import Keys, SettingsScope, hudi_keys, unknown_key

HELP = (
    "Flink: options of Hudi's Flink connector and hoodie.* Hudi options, checked against its "
    "Hudi Flink bundle"
)
TAKES = "Flink takes options of Hudi's Flink connector (FlinkOptions) and hoodie.* Hudi options"
_BUNDLE = JARS[0]
_OPTIONS = "org/apache/hudi/configuration/FlinkOptions"
_OPTION = re.compile(r"[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*")


def check_flink_settings(settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
    """Refuse a key Flink's Hudi connector does not take (`SettingError`)."""
    for key in settings:
        if key.startswith("hoodie."):
            known = hudi_keys(_BUNDLE, HUDI_VERSION)
        else:
            known = _connector_options()
        if key not in known and key not in _connector_options():
            raise unknown_key("flink", key, known, TAKES)
    return {}


@functools.cache
def _connector_options() -> Keys:
    names = jar_literals(fetch(_BUNDLE), classes=(_OPTIONS,))
    what = f"an option of Hudi {HUDI_VERSION}'s Flink connector"
    return Keys(frozenset(n for n in names if _OPTION.fullmatch(n)), what)
