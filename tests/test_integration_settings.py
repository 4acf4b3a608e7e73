"""Integration: `--set` keys checked against the real engines' jars before anything starts.

No engine starts here: the checks read the jars a run fetches anyway (PySpark's, the Hudi
bundles, trino-main and its plugins, hive-common, presto-main and its plugins, the Hudi Flink
bundle), fetched on first use. A key an engine does not take stops the run with one line;
every key lakecompat's own variants set is one the engine takes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lakecompat.engines import engine_class, known_engines
from lakecompat.engines.attached import Attachments
from lakecompat.engines.settings import SettingsScope
from lakecompat.harness.cli import main
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration

BAD = [
    (
        "spark",
        "spark:hoodie.schema.on.read.enabled=true",
        "unknown key hoodie.schema.on.read.enabled for spark: not an option of Hudi 1.2.0 "
        "(did you mean hoodie.schema.on.read.enable?)",
    ),
    (
        "spark",
        "spark:spark.sql.parquet.enableVectorisedReader=false",
        "unknown key spark.sql.parquet.enableVectorisedReader for spark: not a SQL "
        "configuration of Spark 3.5.9 (did you mean spark.sql.parquet.enableVectorizedReader?)",
    ),
    (
        "spark",
        "spark:spark.sql.extensions=x",
        "spark.sql.extensions is a static SQL configuration of Spark: it is fixed when Spark "
        "starts, and a reader setting changes the running session",
    ),
    (
        "spark",
        "spark:spark.executor.memory=2g",
        "unknown key spark.executor.memory for spark: Spark's configuration outside "
        "spark.sql.* is fixed when Spark starts, and a reader setting changes the running "
        "session (Spark takes spark.sql.* SQL configurations, hoodie.* Hudi options, and other "
        "keys for the Hadoop configuration of its reads)",
    ),
    (
        "trino",
        "trino:hudi.use_parquet_column_name=false",
        "unknown key hudi.use_parquet_column_name for trino: not a session property of catalog "
        "hudi in Trino 483 (did you mean hudi.use_parquet_column_names?)",
    ),
    (
        "trino",
        "trino:query_max_run_tim=1h",
        "unknown key query_max_run_tim for trino: not a system session property of Trino 483 "
        "(did you mean query_max_run_time?)",
    ),
    (
        "trino",
        "trino:hudii.use_parquet_column_names=false",
        "unknown key hudii.use_parquet_column_names for trino: hudii is not a catalog of the "
        "run's trino (its catalogs: hive, hudi, hudi_pushdown_off, iceberg; a key without a "
        "catalog is a system session property)",
    ),
    (
        "trino",
        "trino:catalog=hivee",
        "hivee is not a catalog of the run's trino (its catalogs: hive, hudi, "
        "hudi_pushdown_off, iceberg)",
    ),
    (
        "hive",
        "hive:hive.exec.schema.evolutions=true",
        "unknown key hive.exec.schema.evolutions for hive: not a setting of Hive 3.1.3 (did you "
        "mean hive.exec.schema.evolution?)",
    ),
    (
        "hive",
        "hive:hoodie.file.group.reader.enable=false",
        "unknown key hoodie.file.group.reader.enable for hive: not an option of Hudi 1.2.0 "
        "(did you mean hoodie.file.group.reader.enabled?)",
    ),
    (
        "presto",
        "presto:hudi.parquet_use_column_name=true",
        "unknown key hudi.parquet_use_column_name for presto: not a session property of "
        "catalog hudi in Presto 0.287 (did you mean hudi.parquet_use_column_names?)",
    ),
    (
        "flink",
        "flink:read.start-comit=1",
        "unknown key read.start-comit for flink: not an option of Hudi 0.14.0's Flink "
        "connector (did you mean read.start-commit?)",
    ),
]


@pytest.mark.parametrize(("engine", "setting", "why"), BAD, ids=[s for _, s, _ in BAD])
def test_a_key_the_engine_does_not_take_stops_the_run_before_anything_starts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    engine: str,
    setting: str,
    why: str,
) -> None:
    for name in ("LAKECOMPAT_HUDI_VERSION", "LAKECOMPAT_TRINO_VERSION", "LAKECOMPAT_HIVE_VERSION"):
        monkeypatch.delenv(name, raising=False)
    reports = tmp_path / "reports"
    args = ["--engines", engine, "--scenarios", "baseline/*", "--set", setting]
    assert main(["run", "--reports", str(reports), *args]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"lakecompat run: --set {setting}: {why}"
    # Only the cache's notes of a first fetch come before it.
    assert all(line.startswith(("fetching ", "waiting ", "  ")) for line in err[:-1]), err
    assert not reports.exists()


@pytest.mark.parametrize(
    "engine", [n for n in known_engines() if engine_class(n).settings_help and n != "hudi-rs"]
)
def test_every_key_of_lakecompats_own_variants_is_one_the_engine_takes(engine: str) -> None:
    cls = engine_class(engine)
    variants = [v for reading in cls.readings for v in reading.variants]
    variants += [
        off
        for reading in cls.readings
        for v in reading.variants
        if (off := reading.pushdown_off(v)) is not None
    ]
    scope = SettingsScope(engine, formats=cls.formats)
    for variant in variants:
        assert cls.check_settings(variant.settings, scope) == {}, variant


def test_keys_only_the_running_engine_knows_are_taken_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Started(Exception):
        """What the run does once its checks are done (here: nothing)."""

    def run(self: Runner) -> None:
        raise Started

    monkeypatch.setattr(Runner, "run", run)
    args = ["--engines", "spark,hudi-rs", "--scenarios", "baseline/*", "--formats", "hudi"]
    args += ["--set", "spark:parquet.filter.dictionary.enabled=false"]
    args += ["--set", "spark:hoodie.schema.on.read.enable=true"]
    args += ["--set", "hudi-rs:hoodie.read.use.read_optimized.mode=false"]
    with pytest.raises(Started):
        main(["run", "--reports", str(tmp_path / "reports"), *args])
    notes = [line for line in capsys.readouterr().err.splitlines() if "not checked" in line]
    assert notes == [
        "lakecompat run: --set spark:parquet.filter.dictionary.enabled=false: not checked "
        "before the run (Spark hands keys outside spark.* and hoodie.* to the Hadoop "
        "configuration of its reads, which takes any key); a key spark does not know may be "
        "ignored",
        "lakecompat run: --set hudi-rs:hoodie.read.use.read_optimized.mode=false: not checked "
        "before the run (hudi-rs's keys are not known before it starts); a key hudi-rs does "
        "not know may be ignored",
    ]


def test_an_attached_trinos_keys_are_taken_unchecked() -> None:
    cls = engine_class("trino")
    scope = SettingsScope("trino", attachments=Attachments(trino="http://127.0.0.1:1"))
    assert cls.check_settings({"anything": "1"}, scope) == {
        "anything": "the attached Trino's release and catalogs are its own"
    }
