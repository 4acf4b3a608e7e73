"""Integration: both Hive releases, each as a reader and a Metastore, on loopback.

Hive 3.1.3, the Hive line Hudi builds for, is the default: it runs on Java 17 with lakecompat's
small Hive 3 classes (`engines.metastore.hive3`): a class loader, socket helpers that bind to
127.0.0.1, and a Kryo serializer Java 17 needs. Hive 4.0.1 runs on request
(`LAKECOMPAT_HIVE_VERSION=4.0.1`, or a version point's `hive: 4.0.1`). Each test reads real
Hudi tables with one release, checks that every socket of the run listens on loopback only,
and judges the cells against the known outcomes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, SocketWatch, is_loopback, processes_mentioning

from engines.metastore.service import hive_version
from harness.results.expectations import Verdict
from harness.results.outcomes import Cell, Outcome
from harness.run.options import RunOptions
from harness.run.runner import Runner

pytestmark = pytest.mark.integration


def hive_cell(cells: list[Cell], scenario: str, table_type: str, variant: str) -> Cell:
    """The one Hive `SELECT *` snapshot cell with these coordinates."""
    found = [
        c
        for c in cells
        if (c.engine, c.scenario, c.table_type, c.query_type, c.variant, c.shape)
        == ("hive", scenario, table_type, "snapshot", variant, "all")
    ]
    assert len(found) == 1, found
    return found[0]


def test_hive_3_reads_through_the_hive_3_metastore_on_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAKECOMPAT_HIVE_VERSION", raising=False)
    assert hive_version() == "3.1.3"
    watch = SocketWatch()
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern="rename_column/rename",
        engines=("hive", "trino"),
        formats=("hudi",),
        shapes=("all",),
        reports_dir=tmp_path,
        expectations_dir=SCENARIOS.parent / "expectations",
    )
    result = Runner(options, watch).run()
    hive = [c for c in result.cells if c.engine == "hive"]
    assert {c.engine_version for c in hive} == {"3.1.3"}
    assert (result.run_dir / "logs" / "hive-metastore.log").is_file()

    # The unchanged table reads right in every variant (Hive 3 takes Hudi's Hive 3 path).
    baseline = [c for c in hive if c.category == "baseline" and c.query_type == "snapshot"]
    assert baseline and {c.outcome for c in baseline} == {Outcome.PASS}, [
        c.reason for c in baseline
    ]
    # A renamed column: Hudi's file-group reader hands Hive a NullWritable for the files
    # written before the rename; with Hudi's schema-on-read setting it reads right.
    plain = hive_cell(hive, "rename_column/rename", "cow", "schema_evolution_on")
    assert plain.outcome is Outcome.ERROR
    assert "Cannot inspect org.apache.hadoop.io.NullWritable" in plain.reason, plain.reason
    evolved = hive_cell(hive, "rename_column/rename", "cow", "schema_on_read")
    assert evolved.outcome is Outcome.PASS, evolved.reason
    assert evolved.settings == {"hoodie.schema.on.read.enable": "true"}
    # Trino reads the tables the Hive 3 Metastore holds.
    trino = [
        c
        for c in result.cells
        if (c.engine, c.category, c.table_type, c.query_type)
        == ("trino", "baseline", "cow", "snapshot")
    ]
    assert trino and {c.outcome for c in trino} == {Outcome.PASS}, [c.reason for c in trino]

    # Every socket of the run's processes (Metastore, HiveServer2, Trino) is on loopback.
    assert "lakecompat.hive3.ClasspathLoader" in " ".join(watch.commands.values())
    assert [(pid, a) for pid, a in watch.sockets if not is_loopback(a)] == []
    assert processes_mentioning(str(result.run_dir)) == []
    # The known outcomes describe every cell: no regression, nothing fixed upstream.
    unexpected = [j for j in result.judged if j.verdict is not Verdict.AS_EXPECTED]
    assert unexpected == [], [(j.cell.key, j.cell.reason) for j in unexpected]


def test_hive_4_runs_on_request_and_names_its_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKECOMPAT_HIVE_VERSION", "4.0.1")
    watch = SocketWatch()
    options = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern="rename_column/rename",
        engines=("hive",),
        formats=("hudi",),
        shapes=("all",),
        reports_dir=tmp_path,
        expectations_dir=SCENARIOS.parent / "expectations",
    )
    result = Runner(options, watch).run()
    hive = [c for c in result.cells if c.engine == "hive"]
    assert hive and {c.engine_version for c in hive} == {"4.0.1"}
    # Hive 4's own Metastore (the standalone one), not Hive 3's class loader.
    assert "lakecompat.hive3.ClasspathLoader" not in " ".join(watch.commands.values())
    baseline = [c for c in hive if c.category == "baseline" and c.query_type == "snapshot"]
    assert baseline and {c.outcome for c in baseline} == {Outcome.PASS}, [
        c.reason for c in baseline
    ]
    # A renamed column fails on Hive 4 as on Hive 3 without Hudi's schema-on-read setting.
    plain = hive_cell(hive, "rename_column/rename", "cow", "schema_evolution_on")
    assert plain.outcome is not Outcome.PASS, plain.reason
    assert [(pid, a) for pid, a in watch.sockets if not is_loopback(a)] == []
    assert processes_mentioning(str(result.run_dir)) == []
    # Hive 4's known outcomes (scoped `versions: ==4.0.1`) judge its cells.
    unexpected = [j for j in result.judged if j.verdict is not Verdict.AS_EXPECTED]
    assert unexpected == [], [(j.cell.key, j.cell.reason) for j in unexpected]
