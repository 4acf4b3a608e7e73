"""Integration: a real Hive Metastore and HiveServer2 reading Hudi tables written by Spark."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import (
    SharedRun,
    interrupted_run,
    processes_mentioning,
)

from engines.context import RunContext
from engines.errors import QueryError
from engines.hive.reader import HiveEngine
from engines.metastore.hive3 import LOADER_CLASS, is_hive3
from engines.metastore.service import hive_version
from engines.spark.runtime import SparkRuntime
from harness.results.outcomes import Cell, Outcome

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def run(shared_run: SharedRun) -> tuple[Path, list[Cell]]:
    """Hive's cells of the run conftest.py shares (the baseline and a renamed column among
    them, both table types)."""
    return shared_run.run_dir, shared_run.of(engines=("hive",))


def test_services_are_stopped_after_the_run(run: tuple[Path, list[Cell]]) -> None:
    run_dir, _ = run
    assert (run_dir / "logs" / "hive-metastore.log").is_file()
    assert (run_dir / "logs" / "hiveserver2.log").is_file()
    assert processes_mentioning(str(run_dir)) == []


def test_the_services_start_from_class_archives_with_their_configuration_found(
    run: tuple[Path, list[Cell]],
) -> None:
    """The Metastore and HiveServer2 map (or, the first time, write) archives of their classes;
    their configuration comes from their folders through `*_CONF_DIR`, not the classpath.
    HiveServer2 3 runs through lakecompat's class loader instead, whose classes the JVM does
    not archive: `-cp` holds the loader's jar, and the classpath is listed in a file."""
    run_dir, _ = run
    for service in ("hive-metastore", "hiveserver2"):
        log = (run_dir / "logs" / f"{service}.log").read_text()
        started = next(line for line in log.splitlines() if f" starting {service}: " in line)
        if service == "hiveserver2" and is_hive3(hive_version()):
            assert f"-Djava.system.class.loader={LOADER_CLASS}" in started
            assert "-XX:SharedArchiveFile" not in started
            listing = (run_dir / service / "conf" / "classpath.txt").read_text()
            assert f"{service}/conf" not in listing  # not on the classpath
            assert ".jar" in listing
            continue
        assert re.search(r"-XX:(SharedArchiveFile|ArchiveClassesAtExit)=\S+\.jsa", started)
        assert f"{service}/conf" not in started  # not on the classpath
    # Their site files were read: the Metastore's warehouse and HiveServer2's scratch
    # folders are the run's, and both logged in the format of their log4j2 files.
    metastore = (run_dir / "logs" / "hive-metastore.log").read_text()
    if is_hive3(hive_version()):  # Hive 3's Metastore names the file it found
        site = run_dir / "hive-metastore" / "conf" / "metastore-site.xml"
        assert f"Found configuration file file:{site}" in metastore
    else:
        assert str(run_dir / "warehouse") in metastore
    hiveserver2 = (run_dir / "logs" / "hiveserver2.log").read_text()
    assert f"Created local directory: {run_dir / 'hiveserver2' / 'scratch' / 'local'}" in (
        hiveserver2
    )
    assert re.search(r"^\d\d:\d\d:\d\d INFO HiveServer2: STARTUP_MSG", hiveserver2, re.MULTILINE)


def test_control_and_baseline_pass_in_every_variant(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    baseline = [c for c in cells if c.scenario == "baseline/no_change"]
    # cow: snapshot, incremental, time travel; mor: the same + read_optimized; 5 variants each
    assert len(baseline) == 7 * 5
    supported = [c for c in baseline if c.query_type != "time_travel"]
    assert all(c.outcome is Outcome.PASS for c in supported), [c.reason for c in supported]
    for cell in (c for c in baseline if c.query_type == "time_travel"):
        assert cell.outcome is Outcome.UNSUPPORTED
        assert "consume.commit" in cell.reason
        # Hive has no time travel: the default variant's cell reads the table anyway.
        if cell.variant == HiveEngine.default_variant_name():
            assert "reading it anyway" in cell.reason
            assert cell.evidence.sql and ".consume.commit=" in cell.evidence.sql
        else:
            assert "read anyway in the schema_evolution_on variant only" in cell.reason
            assert not cell.evidence.sql
    assert {c.engine_version for c in cells} == {hive_version()}


def test_renamed_column_fails_except_with_the_legacy_reader_or_schema_on_read(
    run: tuple[Path, list[Cell]],
) -> None:
    """Hudi 1.2's default Hive reader cannot fill a column its old files lack (the renamed
    one): the fetch task and the MapReduce job both fail on Hive's NullWritable. The reader of
    Hudi 0.x maps the renamed column and reads it correctly, and so does Hudi's schema-on-read
    setting (`hoodie.schema.on.read.enable=true`, what Hudi's own Hive tests set)."""
    _, cells = run
    renamed = {
        (c.table_type, c.query_type, c.variant): c
        for c in cells
        if c.scenario == "rename_column/rename" and c.query_type in ("snapshot", "read_optimized")
    }
    assert len(renamed) == 15
    for (_, _, variant), cell in renamed.items():
        if variant in ("legacy_reader", "schema_on_read"):
            assert cell.outcome is Outcome.PASS, cell.reason
            continue
        assert cell.outcome is Outcome.ERROR, (variant, cell.outcome)
        assert "Cannot inspect org.apache.hadoop.io.NullWritable" in cell.reason
        # What ran: the session's SETs (lakecompat's and the variant's), then the query.
        sql = (cell.evidence.sql or "").splitlines()
        assert "SET hive.input.format=org.apache.hadoop.hive.ql.io.HiveInputFormat;" in sql
        assert "SET hive.vectorized.execution.enabled=false;" in sql
        setting = next(iter(cell.settings.items()))
        assert f"SET {setting[0]}={setting[1]};" in sql
        assert sql[-1].startswith("SELECT * FROM `t_rename")
        # The error's cause chain with its frames, and the server log the query wrote.
        error = cell.evidence.error or ""
        assert "Caused by: java.lang.UnsupportedOperationException: Cannot inspect" in error
        assert "\n    at org.apache.hadoop.hive." in error
        assert len(error) <= 4000
        log = cell.evidence.log or ""
        assert log.startswith("hiveserver2.log, written during the query:")
        assert "Cannot inspect org.apache.hadoop.io.NullWritable" in log
        assert len(log) <= 3100
    mapreduce = [c for key, c in renamed.items() if key[2] == "mapreduce"]
    assert all("the MapReduce job failed with" in c.reason for c in mapreduce)


def test_interrupt_stops_metastore_and_hiveserver2(tmp_path: Path) -> None:
    run_dir = interrupted_run(tmp_path, "hive", "baseline/*", after=1)
    assert processes_mentioning(str(run_dir)) == []
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 1


@pytest.fixture(scope="module")
def hive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveEngine]:
    """A HiveServer2 of its own, with a run database that is not `default`."""
    folder = tmp_path_factory.mktemp("sessions")
    context = RunContext(folder, spark=SparkRuntime(folder / "logs"), database="lc_sessions")
    engine = HiveEngine(context)
    engine.start()
    try:
        yield engine
    finally:
        engine.stop()
        context.close()


def _answer(connection: Any, statement: str) -> list[tuple[Any, ...]]:
    cursor = connection.cursor()
    cursor.execute(statement)
    rows = cursor.fetchall()
    cursor.close()
    return rows


def test_a_session_opens_with_its_settings_set_and_the_run_database_current(
    hive: HiveEngine,
) -> None:
    settings = {"hive.exec.schema.evolution": "false", "hoodie.t.consume.mode": "INCREMENTAL"}
    connection = hive._session_with(settings)
    try:
        assert _answer(connection, "SELECT current_database()") == [("lc_sessions",)]
        # As `SET key=value` leaves them: set, and listed among the session's changed settings.
        for key, value in settings.items():
            assert _answer(connection, f"SET {key}") == [(f"{key}={value}",)]
        changed = {row[0] for row in _answer(connection, "SET")}
        assert {f"{key}={value}" for key, value in settings.items()} <= changed
    finally:
        connection.close()
    # A session opened later has none of them.
    other = hive._session_with({})
    try:
        assert _answer(other, "SET hoodie.t.consume.mode") == [
            ("hoodie.t.consume.mode is undefined",)
        ]
        assert _answer(other, "SET hive.exec.schema.evolution") == [
            ("hive.exec.schema.evolution=true",)
        ]
    finally:
        other.close()


def test_a_setting_hive_refuses_fails_with_the_set_statements_message(hive: HiveEngine) -> None:
    # Refused in the open request too; the cell shows what the SET statement answers.
    with pytest.raises(QueryError) as refused:
        hive._session_with({"hive.fetch.task.conversion": "bogus"})
    assert str(refused.value).startswith(
        "Error while processing statement: 'SET hive.fetch.task.conversion=bogus' FAILED in "
        "validation"
    )
