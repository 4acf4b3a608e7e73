"""The writer part of a reproduction: a script for every scenario of the catalog, in every
table format that has the scenario's table."""

from __future__ import annotations

import ast
import datetime as dt
import math
import shlex
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from lakecompat.engines.infra.artifacts import maven_repo
from lakecompat.engines.infra.hudi_jars import hudi_bundle
from lakecompat.harness.repro.reproduce import default_folder, find_cell
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import ResultsError
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.writer.hudi.script import writer_script
from lakecompat.harness.writer.iceberg.script import iceberg_script
from lakecompat.harness.writer.script_text import (
    ReproScriptError,
    default_path,
    source,
    submit_command,
)

SCENARIOS = load_scenarios(Path(__file__).resolve().parent.parent / "scenarios")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_every_scenario_gets_a_script_that_compiles(scenario: object) -> None:
    for table_type in scenario.spec.table_types:  # type: ignore[attr-defined]
        try:
            text = writer_script(scenario, table_type, "3.5.3", "1.2.0")  # type: ignore[arg-type]
        except ReproScriptError as exc:
            assert scenario.spec.upgrade is not None, exc  # type: ignore[attr-defined]
            assert "upgrade_writer" in str(exc)
            continue
        compile(text, f"{scenario.id}.py", "exec")  # type: ignore[attr-defined]
        assert "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0" in text
        assert repr(default_path(scenario.id, table_type)) in text  # type: ignore[attr-defined]
        assert text.count("\nwrite(") + text.count("\nsql(") >= 1 + len(scenario.spec.steps)  # type: ignore[attr-defined]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_every_iceberg_table_gets_a_script_that_compiles(scenario: object) -> None:
    for table_type in scenario.spec.table_types:  # type: ignore[attr-defined]
        try:
            text = iceberg_script(scenario, table_type, "3.5.9", "1.10.0", "3")  # type: ignore[arg-type]
        except ReproScriptError as exc:
            assert "has no Iceberg table" in str(exc)
            continue
        compile(text, f"{scenario.id}.py", "exec")  # type: ignore[attr-defined]
        assert "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0" in text
        assert "'format-version'='3'" in text
        assert repr(default_path(scenario.id, table_type)) in text  # type: ignore[attr-defined]
        steps = text.count("\nsql(") + text.count("\nwith_rows(") + text.count(".append()")
        assert steps >= 2 + len(scenario.spec.steps)  # type: ignore[attr-defined]


def test_an_iceberg_script_names_its_table_from_its_path_and_stops_where_the_writer_does() -> None:
    by_id = {s.id: s for s in SCENARIOS}
    text = iceberg_script(by_id["rename_column/then_delete"], "mor", "3.5.9", "1.10.0", "2")
    # The table is <warehouse>/<folder>/<name> in a Hadoop catalog, as the writer names it.
    assert 'TABLE = f"lakecompat.`{FOLDER}`.`{NAME}`"' in text
    assert "'write.delete.mode'='merge-on-read'" in text
    assert "sql('ALTER TABLE ' + TABLE + ' RENAME COLUMN `name` TO `product`')" in text
    assert "'DELETE FROM ' + TABLE + ' WHERE `id` IN (SELECT `id` FROM lakecompat_rows)'" in text
    # An upsert with a schema of its own: the script checks the MERGE kept its new column.
    extra = iceberg_script(by_id["schema_on_write/extra_column"], "cow", "3.5.9", "1.10.0", "2")
    assert "check_columns([" in extra
    with pytest.raises(ReproScriptError, match="has no Iceberg table: steps"):
        iceberg_script(by_id["merge_on_read/add_then_clustering"], "mor", "3.5.9", "1.10.0", "2")


def test_values_are_written_as_source_that_gives_them_back() -> None:
    values = [
        1,
        -2.5,
        Decimal("1.50"),
        dt.date(2024, 2, 29),
        dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC),
        b"\x00\xff",
        "it's",
        None,
        True,
        {"a": [1, None], "b": {"c": "d"}},
        (7,),
    ]
    scope = {"datetime": dt, "Decimal": Decimal}
    assert eval(source(values), scope) == values
    nan = eval(source(float("nan")))
    assert math.isnan(nan) and eval(source(float("-inf"))) == float("-inf")
    with pytest.raises(ReproScriptError, match="cannot write a value of type object"):
        source(object())


def test_a_cell_is_found_by_its_junit_id(tmp_path: Path) -> None:
    cell = Cell(
        scenario="rename_column/rename",
        category="rename_column",
        title="t",
        table_type="cow",
        query_type="snapshot",
        engine="trino",
        engine_version="483",
        variant="column_names",
        settings={},
        writer={"spark": "3.5", "hudi": "1.2.0"},
        outcome=Outcome.WRONG,
    )
    wanted = "trino.cow.snapshot.rename_column/rename[column_names]"
    assert find_cell([cell], wanted, tmp_path) is cell
    with pytest.raises(ResultsError, match=r"no cell .*include: trino\.cow\.snapshot\.rename"):
        find_cell([cell], "trino.cow.snapshot.rename_column/rename[typo]", tmp_path)
    folder = default_folder(tmp_path, wanted)
    assert folder == tmp_path / "repro" / "trino.cow.snapshot.rename_column_rename_column_names"


def test_the_header_gives_the_offline_command_repro_runs() -> None:
    (scenario,) = (s for s in SCENARIOS if s.id == "rename_column/rename")
    text = writer_script(scenario, "cow", "3.5.9", "1.2.0")
    header = ast.get_docstring(ast.parse(text)) or ""
    start = header.index("JAVA_HOME=")
    spelled = header[start : header.index("[TABLE_PATH]", start)]
    variables, argv = submit_command(hudi_bundle("1.2.0"))
    words = [f"{name}={value}" for name, value in variables.items()] + argv
    assert shlex.split(spelled.replace("\\\n", "")) == words  # as the shell reads it
    # Offline: the cached bundle by its path, PySpark's own spark-submit, the venv's Python.
    assert f"--jars {hudi_bundle('1.2.0').local_path(maven_repo())}" in spelled
    assert argv[0].endswith("pyspark/bin/spark-submit") and Path(argv[0]).is_file()
    assert variables["PYSPARK_PYTHON"] == sys.executable
    assert "--packages org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0" in header


def test_bloom_filters_go_on_the_key_and_every_name_a_changed_column_had() -> None:
    from lakecompat.harness.writer.hudi.statements import (
        bloom_filter_columns,
        bloom_filter_settings,
    )

    by_id = {s.id: s for s in SCENARIOS}
    # A rename: the new name and the old one (the files written before the rename carry it).
    assert bloom_filter_columns(by_id["rename_column/rename"].spec) == ("id", "name", "product")
    assert bloom_filter_columns(by_id["type_change/float_to_double"].spec) == ("id", "v")
    assert bloom_filter_columns(by_id["baseline/no_change"].spec) == ("id",)
    spec = by_id["type_change/float_to_double"].spec
    settings = bloom_filter_settings(spec)
    assert settings["parquet.bloom.filter.enabled#v"] == "true"
    assert int(settings["parquet.bloom.filter.expected.ndv#v"]) >= len(spec.rows)
    # The reproduction script writes them too.
    text = writer_script(by_id["type_change/float_to_double"], "cow", "3.5.3", "1.2.0")
    assert "'spark.hadoop.parquet.bloom.filter.enabled#v': 'true'" in text


def test_a_files_columns_say_which_have_a_bloom_filter(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lakecompat.harness.writer.hudi.files import parquet_columns

    table = pa.table({"_hoodie_record_key": ["1"], "id": [1], "price": [1.5], "name": ["a"]})
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, bloom_filter_options={"price": {"ndv": 10}})
    assert parquet_columns(path) == ("id long", "price double (bloom filter)", "name string")


def test_reader_files_are_relocated_to_the_table_the_script_writes(tmp_path: Path) -> None:
    from lakecompat.engines.spark.iceberg import SparkIceberg
    from lakecompat.engines.spark.runtime import iceberg_catalog_name
    from lakecompat.engines.table import TableRef
    from lakecompat.harness.repro.reproduce import relocated

    written = tmp_path / "work" / "tables" / "t_rename_column_rename_cow"
    table = TableRef(written.name, written, "cow", "id", "iceberg")
    target = Path(default_path("rename_column/rename", "cow"))
    text = relocated(SparkIceberg.read_sql(table, "snapshot"), written, target)
    # Spark's Hadoop catalog of the script's warehouse, and the table in the script's folder.
    assert str(tmp_path) not in text
    assert f"warehouse={target.parent.parent.as_uri()}" in text
    assert text.endswith(
        f"SELECT * FROM {iceberg_catalog_name(written.parent.parent)}"
        "."
        "`lakecompat-repro`.`t_rename_column_rename_cow`"
    )
    hudi = f"CREATE TABLE t USING hudi LOCATION '{written}'"
    assert relocated(hudi, written, target) == f"CREATE TABLE t USING hudi LOCATION '{target}'"


def test_each_writer_names_its_release_and_the_jar_its_script_is_submitted_with() -> None:
    from lakecompat.engines.infra.iceberg_jars import iceberg_spark_runtime
    from lakecompat.harness.writer import writer_class

    hudi, iceberg = writer_class("hudi"), writer_class("iceberg")
    assert hudi.release_words({"spark": "3.5.9", "hudi": "1.2.0"}) == "Hudi 1.2.0"
    assert hudi.script_jar({"hudi": "1.2.0"}) == hudi_bundle("1.2.0")
    versions = {"spark": "3.5.9", "iceberg": "1.10.0", "format_version": "3"}
    assert iceberg.release_words(versions) == "Iceberg 1.10.0 (format version 3)"
    assert iceberg.script_jar(versions) == iceberg_spark_runtime("1.10.0")
