"""Integration: Presto 0.287 (Hudi 0.14.0 inside) reading real Hudi tables through the Hive
3.1.3 Metastore.

Presto's server is assembled from Maven jars with lakecompat's few classes of its own (a main
class that keeps the JMX agent from starting, drift's thrift server bound to 127.0.0.1). One
run reads tables Hudi 1.2.0 wrote at table version 6 (`--table-version 6`), which Presto's Hudi
0.14 reads, in both catalogs, and judges the cells against the known outcomes; a second, small
run shows that a table of Hudi 1.2.0's own version (9) fails. Every socket of both runs must
listen on loopback only, and nothing may be left running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, SocketWatch, is_loopback, processes_mentioning

from lakecompat.harness.results.expectations import Verdict
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.runner import Runner, RunResult

pytestmark = pytest.mark.integration
MAIN = "lakecompat.presto.PrestoMain"


def run(reports: Path, pattern: str, watch: SocketWatch, **options: object) -> RunResult:
    """A run of `pattern` (and the baseline) with Presto on the Hive 3 Metastore, judged
    against the known outcomes."""
    run_options = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=("presto",),
        reports_dir=reports,
        expectations_dir=SCENARIOS.parent / "expectations",
        **options,  # type: ignore[arg-type]
    )
    return Runner(run_options, watch).run()


def cell(cells: list[Cell], scenario: str, table_type: str, query: str, variant: str) -> Cell:
    """The one Presto cell with these coordinates."""
    wanted = (scenario, table_type, query, variant)
    found = [c for c in cells if (c.scenario, c.table_type, c.query_type, c.variant) == wanted]
    assert len(found) == 1, found
    return found[0]


def check_loopback_and_gone(watch: SocketWatch, result: RunResult) -> None:
    """Presto ran, every socket of the run's processes listened on loopback, none is left."""
    assert MAIN in " ".join(watch.commands.values()), watch.commands
    assert watch.sockets, "no listening socket was seen"
    assert [(pid, a) for pid, a in watch.sockets if not is_loopback(a)] == []
    assert processes_mentioning(str(result.run_dir)) == []


def test_presto_reads_table_version_6_in_both_catalogs_and_not_version_9(
    tmp_path: Path,
) -> None:
    watch = SocketWatch()
    result = run(tmp_path / "v6", "rename_column/rename", watch, versions={"hudi": "6"})
    cells = result.cells
    # 2 scenarios x (cow 3 + mor 4 query types) x 2 variants.
    assert len(cells) == 28
    assert {(c.engine_version, c.reader_hudi) for c in cells} == {("0.287", "0.14.0")}
    assert (result.run_dir / "logs" / "presto-server.log").is_file()

    # The unchanged table reads right in both catalogs, merge-on-read's log files included.
    for variant in ("hudi_catalog", "hive_catalog"):
        for table_type, query in (
            ("cow", "snapshot"),
            ("mor", "snapshot"),
            ("mor", "read_optimized"),
        ):
            found = cell(cells, "baseline/no_change", table_type, query, variant)
            assert found.outcome is Outcome.PASS, (variant, table_type, query, found.reason)
    plain = cell(cells, "baseline/no_change", "cow", "snapshot", "hive_catalog")
    assert "USE hive.default;" in plain.evidence.sql
    assert "connector.name=hive-hadoop2" in plain.evidence.sql
    # The Hudi connector matches Parquet columns by name: a renamed column reads NULL.
    renamed = cell(cells, "rename_column/rename", "cow", "snapshot", "hudi_catalog")
    assert renamed.outcome is Outcome.WRONG
    assert renamed.reason.startswith("NULLs where values were expected in `product`")
    # No incremental query, no time travel.
    travel = cell(cells, "baseline/no_change", "cow", "time_travel", "hudi_catalog")
    assert travel.outcome is Outcome.UNSUPPORTED and "time travel" in travel.reason

    verdicts = {j.verdict for j in result.judged}
    assert verdicts == {Verdict.AS_EXPECTED}, [
        (j.cell.key, j.cell.reason) for j in result.judged if j.verdict is not Verdict.AS_EXPECTED
    ]
    check_loopback_and_gone(watch, result)

    # Hudi 1.2.0's own table version (9): Presto's Hudi 0.14 fails on its timeline layout.
    watch = SocketWatch()
    result = run(
        tmp_path / "v9", "baseline/no_change", watch, table_types=("cow",), variants="default"
    )
    assert len(result.cells) == 3
    read = cell(result.cells, "baseline/no_change", "cow", "snapshot", "hudi_catalog")
    assert read.outcome is Outcome.ERROR
    assert "TimelineLayoutVersion" in (read.evidence.error or ""), read.evidence.error
    assert {j.verdict for j in result.judged} == {Verdict.AS_EXPECTED}
    check_loopback_and_gone(watch, result)
