"""Integration: a real Trino (assembled from Maven jars) reading Hudi tables written by Spark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import interrupted_run, processes_mentioning, quiet_run

from lakecompat.engines.context import RunContext
from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.engines.table import TableRef
from lakecompat.engines.trino.reader import TrinoEngine
from lakecompat.engines.trino.runtime import DEFAULT_TRINO_VERSION
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.releases import environment_releases

pytestmark = pytest.mark.integration
VARIANTS = TrinoEngine.reading("hudi").variants


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Cell]]:
    reports = tmp_path_factory.mktemp("reports")
    return quiet_run(reports, ("trino",), "add_column/after,rename_column/then_upsert")


def by_key(cells: list[Cell], scenario: str) -> dict[tuple[str, str, str], Cell]:
    return {(c.table_type, c.query_type, c.variant): c for c in cells if c.scenario == scenario}


def test_trino_ran_and_stopped(run: tuple[Path, list[Cell]]) -> None:
    run_dir, cells = run
    assert "SERVER STARTED" in (run_dir / "logs" / "trino-server.log").read_text()
    assert {c.engine_version for c in cells} == {
        environment_releases().engine("trino", DEFAULT_TRINO_VERSION)
    }
    # Nothing started for the run is left: Trino, the Metastore, Spark.
    assert processes_mentioning(str(run_dir)) == []


def test_trino_starts_from_its_class_archive(run: tuple[Path, list[Cell]]) -> None:
    """The first Trino on a machine writes the archive of its classes when it stops; every
    later one maps it. After the run, the archive is in the cache either way."""
    run_dir, _ = run
    started = next(
        line
        for line in (run_dir / "logs" / "trino.log").read_text().splitlines()
        if line.startswith("--- ") and " starting trino: " in line
    )
    found = re.search(r"-XX:(SharedArchiveFile|ArchiveClassesAtExit)=(\S+)", started)
    assert found, started
    archive = Path(found.group(2).split(".jsa")[0] + ".jsa")
    assert archive.parent == cache_dir() / "class-archives"
    assert archive.read_bytes()[:4] == (0xF00BABA8).to_bytes(4, "little")
    assert not list(archive.parent.glob(archive.name + ".*.part"))


def test_control_and_baseline_read_correctly(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    baseline = by_key(cells, "baseline/no_change")
    # cow: snapshot, incremental, time travel; mor: the same + read_optimized; 3 variants each
    assert len(baseline) == 7 * 3
    assert all(c.outcome is not Outcome.ENGINE_FAILED for c in baseline.values())
    # The evidence names the catalog and its properties: the variants differ as they run.
    names = baseline[("cow", "snapshot", "column_names")].evidence.sql or ""
    assert "-- etc/catalog/hudi.properties:\n--   connector.name=hudi\n" in names
    assert "--   hive.metastore.uri=thrift://127.0.0.1:" in names
    assert names.endswith(
        "USE hudi.default;\nSET SESSION hudi.use_parquet_column_names = true;\n"
        'SELECT * FROM "t_baseline_no_change_cow";'
    )
    hive = baseline[("cow", "snapshot", "hive_catalog")].evidence.sql or ""
    assert "-- etc/catalog/hive.properties:\n--   connector.name=hive\n" in hive
    assert "--   hive.hudi-catalog-name=hudi\n" in hive
    assert hive.endswith('USE hive.default;\nSELECT * FROM "t_baseline_no_change_cow";')
    ro = baseline[("mor", "read_optimized", "hive_catalog")].evidence.sql or ""
    assert ro.endswith('SELECT * FROM "t_baseline_no_change_mor_ro";')
    for (table_type, query_type, _), cell in baseline.items():
        if (table_type, query_type) in (("cow", "snapshot"), ("mor", "read_optimized")):
            assert cell.outcome is Outcome.PASS, cell.reason
        else:
            assert cell.outcome is Outcome.UNSUPPORTED, cell.reason
    travel = baseline[("cow", "time_travel", "column_names")]
    assert "does not support versioned tables" in travel.reason
    assert "FOR VERSION AS OF" in (travel.evidence.sql or "")
    # The failed read keeps Trino's exception with the coordinator's frames, and the log.
    error = (travel.evidence.error or "").splitlines()
    assert error[0].startswith("QueryError: NOT_SUPPORTED: ")
    assert error[1].startswith("io.trino.spi.TrinoException: ")
    assert error[2].startswith("    at io.trino.")
    assert (travel.evidence.log or "").startswith("trino-server.log")


def test_merge_on_read_snapshot_is_unsupported_with_what_rt_returns(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    snapshot = [c for c in cells if c.table_type == "mor" and c.query_type == "snapshot"]
    assert snapshot and all(c.outcome is Outcome.UNSUPPORTED for c in snapshot)
    assert all("no merge-on-read snapshot query" in c.reason for c in snapshot)
    upserted = by_key(cells, "rename_column/then_upsert")[("mor", "snapshot", "column_names")]
    # The upsert went to a log file, which `_rt` does not read: the base file's values show.
    assert "no merge-on-read snapshot query" in upserted.reason
    assert "reading it anyway: " in upserted.reason and "wrong values" in upserted.reason
    assert (upserted.evidence.sql or "").endswith(
        'SELECT * FROM "t_rename_column_then_upsert_mor_rt";'
    )
    assert upserted.evidence.sample


def test_column_matching_variants_show_both_failures(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    added = by_key(cells, "add_column/after")
    # A column added in the middle: by name right, by position shifted one column.
    assert added[("cow", "snapshot", "column_names")].outcome is Outcome.PASS
    assert added[("cow", "snapshot", "hive_catalog")].outcome is Outcome.PASS
    shifted = added[("cow", "snapshot", "column_positions")]
    assert shifted.outcome is Outcome.WRONG
    assert "`price` holds the values of column `qty`" in shifted.reason
    assert shifted.settings == {"catalog": "hudi", "hudi.use_parquet_column_names": "false"}
    renamed = by_key(cells, "rename_column/then_upsert")
    # A renamed column: by name NULL in the rows of files written before the rename, by
    # position right. Copy-on-write too: the upsert rewrote only the file groups it touched,
    # and the seed rows it did not touch are still in files of the old schema.
    for table_type, query_type in (("mor", "read_optimized"), ("cow", "snapshot")):
        for variant in ("column_names", "hive_catalog"):
            cell = renamed[(table_type, query_type, variant)]
            assert cell.outcome is Outcome.WRONG, (table_type, variant)
            assert "NULLs where values were expected in `product`" in cell.reason
        assert renamed[(table_type, query_type, "column_positions")].outcome is Outcome.PASS


def test_interrupt_stops_trino(tmp_path: Path) -> None:
    run_dir = interrupted_run(tmp_path, "trino", "baseline/*", after=2)
    assert processes_mentioning(str(run_dir)) == []
    _, kept = load_run(run_dir)
    assert len(kept) == 2


def test_query_error_carries_trinos_message(tmp_path: Path) -> None:
    context = RunContext(tmp_path, SparkRuntime(tmp_path / "logs"))
    engine = TrinoEngine(context)
    try:
        engine.start()
        missing = TableRef("no_such_table", tmp_path / "nowhere", "cow", "id")
        with pytest.raises(Exception, match="TABLE_NOT_FOUND"):
            engine.query(engine.read_sql(missing, "snapshot"), engine.variants_of("hudi")[0])
    finally:
        engine.stop()
        context.close()
    assert processes_mentioning(str(tmp_path)) == []
