"""`--set ENGINE:KEY=VALUE` before anything starts, without fetching anything: the string
literals of a real class file, known keys and the closest one to a typo, the settings an
engine takes no settings for, and what `run.json` and the run's output say about them."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from lakecompat.engines.infra.jar_strings import class_literals, jar_literals
from lakecompat.engines.settings import Keys
from lakecompat.harness.cli import main
from lakecompat.harness.options import DEFAULT_SCENARIOS
from lakecompat.harness.run.folder import run_info
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.settings import unchecked_lines
from lakecompat.harness.scenario.load import load_scenarios


def catalyst() -> Path:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return next(jars.glob("spark-catalyst_*.jar"))


def test_a_class_file_gives_its_string_literals() -> None:
    with zipfile.ZipFile(catalyst()) as jar:
        literals = class_literals(jar.read("org/apache/spark/sql/internal/StaticSQLConf$.class"))
    assert {"spark.sql.extensions", "spark.sql.warehouse.dir"} <= literals
    # Names of methods and classes are text of the constant pool too, but no literal.
    assert "buildStaticConf" not in literals


def test_a_jars_literals_are_read_once_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKECOMPAT_CACHE", str(tmp_path))
    first = jar_literals(catalyst(), "spark.sql.ansi")
    kept = list((tmp_path / "jar-strings").glob("spark-catalyst_*.json"))
    assert len(kept) == 1 and "spark.sql.ansi.doubleQuotedIdentifiers" in first
    assert all(name.startswith("spark.sql.ansi") for name in first)
    kept[0].write_text(kept[0].read_text().replace("doubleQuotedIdentifiers", "kept"))
    assert "spark.sql.ansi.kept" in jar_literals(catalyst(), "spark.sql.ansi")


def test_keys_take_table_names_where_hudi_has_a_placeholder() -> None:
    keys = Keys(frozenset({"hoodie.%s.consume.mode", "hoodie.schema.on.read.enable"}), "x")
    assert "hoodie.t_rename_cow.consume.mode" in keys
    assert "hoodie.a.b.consume.mode" not in keys
    assert keys.closest("hoodie.schema.on.read.enabled") == "hoodie.schema.on.read.enable"
    assert keys.closest("hoodie.something.else") is None


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--engines", "spark", "--set", "trino:query_max_run_time=1h"],
            "lakecompat run: --set trino:query_max_run_time=1h: this run does not read with "
            "trino (its engines: spark)",
        ),
        (
            ["--engines", "daft", "--set", "daft:io.threads=2"],
            "lakecompat run: --set daft:io.threads=2: daft reads with no settings",
        ),
    ],
    ids=["engine-not-in-run", "engine-without-settings"],
)
def test_a_setting_for_no_engine_of_the_run_stops_it_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    reports = tmp_path / "reports"
    assert main(["run", "--reports", str(reports), "--scenarios", "baseline/*", *args]) == 2
    assert capsys.readouterr().err == line + "\n"
    assert not reports.exists()


def test_run_json_and_the_output_name_the_settings_taken_unchecked(tmp_path: Path) -> None:
    options = RunOptions(
        engines=("hudi-rs",),
        engine_settings={"hudi-rs": {"hoodie.read.x": "1"}},
        unchecked_settings={"hudi-rs": {"hoodie.read.x": "its keys are not known"}},
    )
    scenarios = load_scenarios(DEFAULT_SCENARIOS, "baseline/*")
    info = run_info(tmp_path, options, {}, {}, scenarios, [])
    assert info["engine_settings"] == {"hudi-rs": {"hoodie.read.x": "1"}}
    assert info["unchecked_settings"] == {"hudi-rs": {"hoodie.read.x": "its keys are not known"}}
    assert unchecked_lines(options) == [
        "--set hudi-rs:hoodie.read.x=1: not checked before the run (its keys are not known); "
        "a key hudi-rs does not know may be ignored"
    ]
