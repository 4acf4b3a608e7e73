"""The keys `--set spark:KEY=VALUE` takes, checked before Spark starts.

The Spark reader sets each setting in its session's configuration (`spark.conf.set`) for the
read. There, Spark keeps any key: one it does not know it ignores, silently. So the keys are
checked against what the jars define:

- `spark.sql.*`: one of Spark's SQL configurations (the `spark.sql.` literals of PySpark's
  `spark-*` jars, and of Iceberg's Spark runtime when the run reads Iceberg tables); a static
  one is refused, since it is fixed when Spark starts (Spark refuses to set it too);
- `spark.sql.catalog.*`: a catalog's own options, taken unchecked;
- any other `spark.*` key: refused, Spark's core configuration is fixed when Spark starts;
- `hoodie.*`: one of the Hudi options of the bundle the reader reads with;
- anything else (`parquet.*`, `fs.*`): Spark copies it into the Hadoop configuration of its
  reads, which takes any key, so it is taken unchecked.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.formats.iceberg import ICEBERG
from lakecompat.engines.infra.artifacts import fetch
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.engines.infra.iceberg_jars import iceberg_spark_runtime
from lakecompat.engines.infra.jar_strings import jar_literals
from lakecompat.engines.settings import Keys, SettingError, SettingsScope, hudi_keys, unknown_key

TAKES = (
    "Spark takes spark.sql.* SQL configurations, hoodie.* Hudi options, and other keys for the "
    "Hadoop configuration of its reads"
)
HELP = (
    "Spark: spark.sql.* SQL configurations and hoodie.* Hudi options, checked against Spark's "
    "and Hudi's jars; other keys go to the Hadoop configuration of its reads, unchecked"
)
_STATIC = "org/apache/spark/sql/internal/StaticSQLConf$"
_SQL_KEY = re.compile(r"spark\.sql(\.[A-Za-z0-9_-]+)+")


def check_spark_settings(settings: dict[str, str], scope: SettingsScope) -> dict[str, str]:
    """Refuse a key the Spark reader does not take (`SettingError`); return those it takes
    unchecked, with why."""
    unchecked: dict[str, str] = {}
    for key in settings:
        if key.startswith("hoodie."):
            release = scope.reads_with(HUDI.name)
            hudi = hudi_keys(hudi_bundle(release), release)
            if key not in hudi:
                raise unknown_key("spark", key, hudi, TAKES)
        elif key.startswith("spark.sql.catalog."):
            unchecked[key] = "a catalog's options are the catalog's own"
        elif key.startswith("spark.sql."):
            iceberg = ICEBERG.name in scope.formats
            _check_sql(key, scope.releases.format(ICEBERG.name) if iceberg else None)
        elif key.startswith("spark."):
            raise SettingError(
                key,
                f"unknown key {key} for spark: Spark's configuration outside spark.sql.* is "
                "fixed when Spark starts, and a reader setting changes the running session "
                f"({TAKES})",
            )
        else:
            unchecked[key] = (
                "Spark hands keys outside spark.* and hoodie.* to the Hadoop configuration of "
                "its reads, which takes any key"
            )
    return unchecked


def _check_sql(key: str, iceberg: str | None) -> None:
    """`key` is one of Spark's SQL configurations (with Iceberg release `iceberg`'s, for a run
    that reads Iceberg tables), and not a static one."""
    known, static = _sql_configurations(iceberg)
    if key in static:
        raise SettingError(
            key,
            f"{key} is a static SQL configuration of Spark: it is fixed when Spark starts, and "
            "a reader setting changes the running session",
        )
    if key not in known:
        raise unknown_key("spark", key, known, TAKES)


@functools.cache
def _sql_configurations(iceberg: str | None) -> tuple[Keys, frozenset[str]]:
    """Spark's SQL configurations (with Iceberg's, for a run that reads Iceberg tables), and
    the static ones among them."""
    version, jars = _pyspark()
    catalyst = next(jar for jar in jars if jar.name.startswith("spark-catalyst_"))
    static = jar_literals(catalyst, "spark.sql.", classes=(_STATIC,))
    names = {name for jar in jars for name in jar_literals(jar, "spark.sql.")}
    if iceberg:
        names |= jar_literals(fetch(iceberg_spark_runtime(iceberg)), "spark.sql.")
    keys = frozenset(n for n in names if _SQL_KEY.fullmatch(n))
    return Keys(keys, f"a SQL configuration of Spark {version}"), static


def _pyspark() -> tuple[str, list[Path]]:
    """PySpark's release and its Spark jars."""
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("spark-*.jar"))
    return pyspark.__version__, jars
