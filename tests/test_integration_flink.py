"""Integration: Flink 1.17 with Hudi 0.14.0's Flink connector, on real Hudi tables.

Flink's jars come from PyPI (`apache-flink-libraries`) and Hudi's from Maven; our small SQL
service runs them in one JVM. These tests read tables the real writer made at Hudi 0.15.0
(table version 6, which Hudi 0.14 reads) and at 1.2.0 (which it cannot), judge the cells
against the known outcomes, and check that a hung Flink is ended by the query timeout and
started again without ending the run.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from support import SCENARIOS, SignalAfter, SocketWatch, is_loopback, processes_mentioning

from lakecompat.engines.releases import Releases
from lakecompat.harness.results.expectations import Verdict
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
SERVER = "lakecompat.FlinkSqlServer"
EXPECTATIONS = SCENARIOS.parent / "expectations"


def run(reports: Path, pattern: str, progress: Progress | None = None, **options: object) -> Runner:
    """A run of `pattern` (and the baseline) with Flink, judged against the known outcomes."""
    run_options = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=("flink",),
        reports_dir=reports,
        expectations_dir=EXPECTATIONS,
        **options,  # type: ignore[arg-type]
    )
    return Runner(run_options, progress or Progress(quiet=True))


def cell(cells: list[Cell], scenario: str, table_type: str, query: str, variant: str) -> Cell:
    """The one Flink cell with these coordinates."""
    wanted = (scenario, table_type, query, variant)
    found = [c for c in cells if (c.scenario, c.table_type, c.query_type, c.variant) == wanted]
    assert len(found) == 1, found
    return found[0]


def test_flink_reads_tables_hudi_0_15_wrote(tmp_path: Path) -> None:
    watch = SocketWatch()
    result = run(
        tmp_path, "rename_column/rename", watch, releases=Releases({"hudi": "0.15.0"})
    ).run()
    cells = result.cells
    # 2 scenarios x (cow 3 + mor 4 query types) x 2 variants.
    assert len(cells) == 28
    assert {(c.engine_version, c.reader_hudi) for c in cells} == {("1.17.2", "0.14.0")}

    # Every query type reads the unchanged table correctly.
    baseline = [c for c in cells if c.category == "baseline"]
    assert {c.outcome for c in baseline} == {Outcome.PASS}, [c.reason for c in baseline]
    # A renamed column reads NULL unless Hudi's schema-on-read is on; with it, it is right.
    plain = cell(cells, "rename_column/rename", "cow", "snapshot", "default")
    assert plain.outcome is Outcome.WRONG
    assert plain.reason.startswith("NULLs where values were expected in `product`"), plain.reason
    assert "'connector' = 'hudi'" in plain.evidence.sql
    evolved = cell(cells, "rename_column/rename", "mor", "snapshot", "schema_on_read")
    assert evolved.outcome is Outcome.PASS, evolved.reason
    assert evolved.settings == {"hoodie.schema.on.read.enable": "true"}
    # The incremental read starts after the reference commit: only the rows changed since.
    incremental = cell(cells, "rename_column/rename", "cow", "incremental", "schema_on_read")
    assert incremental.outcome is Outcome.PASS, incremental.reason
    assert "'read.start-commit'" in incremental.evidence.sql

    # The known outcomes describe every cell: no regression, nothing fixed upstream.
    verdicts = {j.verdict for j in result.judged}
    assert verdicts == {Verdict.AS_EXPECTED}, [
        (j.cell.key, j.cell.reason) for j in result.judged if j.verdict is not Verdict.AS_EXPECTED
    ]
    assert SERVER in " ".join(watch.commands.values()), watch.commands
    assert [(pid, a) for pid, a in watch.sockets if not is_loopback(a)] == []
    assert processes_mentioning(str(result.run_dir)) == []


def test_flink_cannot_read_tables_hudi_1_2_wrote(tmp_path: Path) -> None:
    result = run(tmp_path, "baseline/no_change", table_types=("cow",)).run()
    assert len(result.cells) == 6
    for found in result.cells:
        assert found.outcome is Outcome.ERROR
        assert "TimelineLayoutVersion" in found.reason, found.reason
    assert {j.verdict for j in result.judged} == {Verdict.AS_EXPECTED}


def test_a_hung_flink_query_times_out_and_flink_is_restarted(tmp_path: Path) -> None:
    progress = SignalAfter(SERVER, signal.SIGSTOP, cells=2)
    runner = run(
        tmp_path,
        "add_column/at_end",
        progress,
        table_types=("cow",),
        releases=Releases({"hudi": "0.15.0"}),
        # The frozen server never answers; every other read (0.3 s typically, a few seconds
        # on a freshly restarted Flink on a busy machine) stays far below the timeout.
        query_timeout=20,
    )
    result = runner.run()
    assert progress.victim is not None
    timeouts = [c for c in result.cells if c.reason == "timeout after 20 s"]
    assert len(timeouts) == 1
    assert timeouts[0].outcome is Outcome.ERROR
    events = (result.run_dir / "events.jsonl").read_text().splitlines()
    assert [json.loads(e)["engine"] for e in events if '"restart"' in e] == ["flink"]
    # After the restart Flink reads again: the last table's snapshot is right.
    last = cell(result.cells, "add_column/at_end", "cow", "snapshot", "schema_on_read")
    assert last.outcome is Outcome.PASS, last.reason
    assert processes_mentioning(str(result.run_dir)) == []
