"""Integration: both Hive releases, each as a reader and a Metastore, on loopback.

Hive 3.1.3, the Hive line Hudi builds for, is the default: it runs on Java 17 with lakecompat's
small Hive 3 classes (`engines.metastore.hive3`): a class loader, socket helpers that bind to
127.0.0.1, and a Kryo serializer Java 17 needs. Hive 4.0.1 runs on request
(`LAKECOMPAT_HIVE_VERSION=4.0.1`, or a version point's `hive: 4.0.1`). Each test reads real
Hudi tables with one release (Hive 3's: the session's shared run, made with the default) and
judges the cells against the known outcomes; Hive 4's run checks that every socket listens on
loopback only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, SharedRun, SocketWatch, is_loopback, processes_mentioning

from lakecompat.engines.metastore.service import DEFAULT_HIVE_VERSION
from lakecompat.engines.releases import Releases
from lakecompat.harness.results.expectations import Verdict, judge, load_expectations
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.runner import Runner

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


def test_hive_3_is_the_default_and_reads_through_the_hive_3_metastore(
    shared_run: SharedRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's shared run (tests/conftest.py) read with the default release: Hive 3's
    Metastore and HiveServer2, Trino on the tables that Metastore holds. Its renamed column's
    Hive cells are test_integration_hive's, and the sockets of a run on the default release
    test_integration_catalog's: this checks what is Hive 3's own."""
    assert DEFAULT_HIVE_VERSION == "3.1.3"
    hive = shared_run.of(engines=("hive",))
    assert {c.engine_version for c in hive} == {"3.1.3"}
    logs = shared_run.run_dir / "logs"
    metastore = (logs / "hive-metastore.log").read_text()
    assert "INFO HiveMetaStore: STARTUP_MSG:" in metastore and "version = 3.1.3" in metastore
    started = (logs / "hiveserver2.log").read_text().splitlines()[0]  # the command it ran
    assert "lakecompat.hive3.ClasspathLoader" in started

    # The unchanged table reads right in every variant (Hive 3 takes Hudi's Hive 3 path).
    baseline = [c for c in hive if c.category == "baseline" and c.query_type == "snapshot"]
    assert baseline and {c.outcome for c in baseline} == {Outcome.PASS}, [
        c.reason for c in baseline
    ]
    # With Hudi's schema-on-read setting a renamed column reads right.
    evolved = hive_cell(hive, "rename_column/rename", "cow", "schema_on_read")
    assert evolved.outcome is Outcome.PASS, evolved.reason
    assert evolved.settings == {"hoodie.schema.on.read.enable": "true"}
    # Trino reads the tables the Hive 3 Metastore holds.
    trino = [
        c
        for c in shared_run.of(engines=("trino",))
        if (c.category, c.table_type, c.query_type) == ("baseline", "cow", "snapshot")
    ]
    assert trino and {c.outcome for c in trino} == {Outcome.PASS}, [c.reason for c in trino]
    # The known outcomes describe every Hive and Trino cell: no regression, nothing fixed
    # upstream.
    known = load_expectations(SCENARIOS.parent / "expectations")
    judged = judge(shared_run.of(engines=("hive", "trino"), shapes=None), known)
    unexpected = [j for j in judged if j.verdict is not Verdict.AS_EXPECTED]
    assert unexpected == [], [(j.cell.key, j.cell.reason) for j in unexpected]


def test_hive_4_runs_on_request_and_names_its_release(
    tmp_path: Path,
) -> None:
    watch = SocketWatch()
    options = RunOptions(
        releases=Releases(engines={"hive": "4.0.1"}),
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
