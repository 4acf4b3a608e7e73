"""Integration: a real Hive Metastore and HiveServer2 reading Hudi tables written by Spark."""

from __future__ import annotations

import dataclasses
import itertools
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import (
    SharedRun,
    interrupted_run,
    processes_mentioning,
)

from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import QueryError, describe_error
from lakecompat.engines.hive.failures import file_groups
from lakecompat.engines.hive.probes import FileGroupCauses
from lakecompat.engines.hive.reader import HiveEngine
from lakecompat.engines.metastore.hive3 import LOADER_CLASS, is_hive3
from lakecompat.engines.metastore.service import DEFAULT_HIVE_VERSION
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.harness.options import DEFAULT_SCENARIOS
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.releases import environment_releases
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.writer import create_writer
from lakecompat.harness.writer.cache import default_location

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
        if service == "hiveserver2" and is_hive3(
            environment_releases().engine("hive", DEFAULT_HIVE_VERSION)
        ):
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
    if is_hive3(
        environment_releases().engine("hive", DEFAULT_HIVE_VERSION)
    ):  # Hive 3's Metastore names the file it found
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
        if cell.variant == HiveEngine.default_variant_name("hudi"):
            assert "reading it anyway" in cell.reason
            assert cell.evidence.sql and ".consume.commit=" in cell.evidence.sql
        else:
            assert "read anyway in the schema_evolution_on variant only" in cell.reason
            assert not cell.evidence.sql
    assert {c.engine_version for c in cells} == {
        environment_releases().engine("hive", DEFAULT_HIVE_VERSION)
    }


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


@pytest.fixture(scope="module")
def timestamps_table(hive: HiveEngine) -> TableRef:
    """add_column/table_with_timestamps as a copy-on-write Hudi table, from the table cache
    (written into it the first time). Hive fails on its file groups in two ways: on the
    timestamps (the column is added), and on the added column of the row whose timestamps
    are NULL."""
    (scenario,) = load_scenarios(DEFAULT_SCENARIOS, "add_column/table_with_timestamps")
    context = hive.context
    writer = create_writer(context.spark, context.tables_dir, cache=default_location())
    try:
        written = writer.write(scenario, "cow")
    finally:
        writer.close()
    assert written.ok, written.message
    return written.table


def _ids_rotated(table: TableRef, folder: Path, shift: int) -> TableRef:
    """A copy of `table` whose file groups keep their files but trade their ids: each takes
    the id `shift` places after its own in sorted order. Hudi lists file groups in the hash
    order of their ids (random UUIDs, one set per write), so Hive reads the same files in
    another order, as it reads the same table written again. The copy has no metadata table
    (which lists the old names): Hudi lists the files themselves."""
    ids = file_groups(table.path)
    assert len({len(i) for i in ids}) == 1  # renamed in place in the timeline's Avro
    rotated = dict(zip(ids, ids[shift:] + ids[:shift], strict=True))
    named = re.compile("|".join(map(re.escape, ids)))
    copy = folder / f"{table.name}_{shift}"
    shutil.copytree(table.path, copy, ignore=shutil.ignore_patterns("*.crc", "metadata"))
    data = [p for p in copy.rglob("*") if p.is_file() and ".hoodie" not in p.parts]
    for path in data:  # two steps: a new name may be another file's old one
        path.rename(path.with_name(path.name + ".old"))
    for path in data:
        new = named.sub(lambda m: rotated[m[0]], path.name)
        path.with_name(path.name + ".old").rename(path.with_name(new))
    for path in (copy / ".hoodie" / "timeline").glob("*"):
        if path.is_file():
            text = path.read_bytes().decode("latin-1")
            path.write_bytes(named.sub(lambda m: rotated[m[0]], text).encode("latin-1"))
    properties = copy / ".hoodie" / "hoodie.properties"
    lines = properties.read_text().splitlines()
    kept = [line for line in lines if not line.startswith("hoodie.table.metadata.partitions")]
    properties.write_text("\n".join(kept) + "\n")
    return dataclasses.replace(table, name=f"{table.name}_{shift}", path=copy)


def test_a_failed_read_gives_one_reason_whichever_file_group_hive_reads_first(
    hive: HiveEngine, timestamps_table: TableRef, tmp_path: Path
) -> None:
    """HiveServer2 stops at the first row that fails; which file group it reads first follows
    the file groups' random ids. The reason names the innermost cause of every file group, in
    sorted order: the same whichever file group comes first, in a session the variant's
    queries share or in a new one, in any order of reads (the old first error gave two reasons
    in each variant for these three copies). Where a file group's record reader fails (Hudi's
    reader of 0.x on files without the added column), that cause alone: Hive meets it
    whatever the order."""
    copies = [_ids_rotated(timestamps_table, tmp_path, shift) for shift in range(3)]
    for copy in copies:
        hive.register(copy)
    reasons: dict[str, set[str]] = {"schema_evolution_on": set(), "legacy_reader": set()}
    kept = hive.file_group_causes
    # Each round finds the causes afresh; the last reads them from where the round before
    # kept them (`engines.hive.probes`), one file per copy and variant.
    rounds = [(False, copies, "first"), (True, copies[::-1], "second"), (False, copies, "second")]
    for fresh, order, causes in rounds:
        hive.file_group_causes = FileGroupCauses(tmp_path / causes)
        for copy, variant in itertools.product(order, HiveEngine.reading("hudi").variants):
            if variant.name not in reasons:
                continue
            if fresh:  # a session of its own for each read
                for connection in hive._sessions.values():
                    connection.close()
                hive._sessions.clear()
            with pytest.raises(QueryError) as failed:
                hive.query_table(copy, hive.read_sql(copy, "snapshot"), variant)
            reasons[variant.name].add(describe_error(failed.value))
    hive.file_group_causes = kept
    counts = {name: len(found) for name, found in reasons.items()}
    assert counts == {"schema_evolution_on": 1, "legacy_reader": 1}, reasons
    assert len(list((tmp_path / "second").glob("*.json"))) == len(copies) * len(reasons)
    # HiveServer2's own message stays, under the reason.
    said = str(failed.value).splitlines()[1:]
    assert said and said[0].startswith("java.io.IOException: org.apache."), said
    cast = (
        "java.lang.ClassCastException: class org.apache.hadoop.io.LongWritable cannot be cast "
        "to class org.apache.hadoop.hive.serde2.io.TimestampWritableV2"
    )
    nulls = (
        "java.lang.UnsupportedOperationException: Cannot inspect org.apache.hadoop.io.NullWritable"
    )
    assert reasons["schema_evolution_on"] == {f"QueryError: {cast}; in other file groups: {nulls}"}
    (legacy,) = reasons["legacy_reader"]
    assert legacy.startswith(
        "QueryError: org.apache.hudi.exception.HoodieException: Field extra not found in log "
        "schema."
    )
    # Another read of the table that fails otherwise reads otherwise: the incremental read
    # reads only the file written after the column was added.
    default = HiveEngine.reading("hudi").variants[0]
    with pytest.raises(QueryError) as incremental:
        hive.query_table(copies[0], hive.read_sql(copies[0], "incremental"), default)
    assert describe_error(incremental.value) == f"QueryError: {cast}"
