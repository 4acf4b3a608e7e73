"""Integration: the benchmark's two run modes.

A scenario re-run against the warm engines at the end of a run gives exactly the cells of
the ordinary run. A run that restarts every engine before each scenario (as container-based
suites isolate tests) runs every cell again on fresh engines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, comparable

from harness.outcomes import Cell
from harness.progress import Progress
from harness.runner import Runner, RunOptions, RunResult

pytestmark = pytest.mark.integration
PATTERN = "rename_column/rename"


def run(reports: Path, **options: object) -> RunResult:
    settings = RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=PATTERN,
        engines=("spark", "hive"),
        table_types=("cow",),
        reports_dir=reports,
        **options,  # type: ignore[arg-type]
    )
    return Runner(settings, Progress(quiet=True)).run()


def of_scenario(cells: list[Cell], scenario: str) -> list[Cell]:
    return [c for c in cells if c.scenario == scenario]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return run(tmp_path_factory.mktemp("shared"), rerun_pattern=PATTERN)


def test_a_warm_rerun_gives_the_same_cells(shared: RunResult) -> None:
    assert shared.rerun_seconds is not None and shared.rerun_seconds > 0
    first = of_scenario(shared.cells, PATTERN)
    assert len(first) == 3 * (2 + 4)  # cow: 3 query types; Spark 2 and Hive 4 variants
    # Same tables folder: the writer wrote the scenario's table again in place.
    assert comparable(shared.rerun_cells, shared.run_dir) == comparable(first, shared.run_dir)
    # The re-run is not part of the run: its results were not recorded, and are deleted.
    assert len(shared.cells) == len(first) + len(of_scenario(shared.cells, "baseline/no_change"))
    assert not (shared.run_dir / "rerun").exists()


def test_engines_restarted_per_scenario_run_every_cell_again(
    shared: RunResult, tmp_path: Path
) -> None:
    isolated = run(tmp_path, isolate_scenarios=True)
    assert [c.key for c in isolated.cells] == [c.key for c in shared.cells]
    # Spark answers the same with a fresh JVM. Hive does not always: a fresh HiveServer2
    # fails its first queries of the renamed table ("Cannot inspect NullWritable") where one
    # that read the baseline table before answers correctly; the benchmark's comparison
    # counts time only, and docs/research/README.md records the finding.
    spark = [c for c in isolated.cells if c.engine == "spark"]
    assert comparable(spark, isolated.run_dir) == comparable(
        [c for c in shared.cells if c.engine == "spark"], shared.run_dir
    )
    # Two scenarios (the baseline and the chosen one): HiveServer2 started twice.
    hive_log = (isolated.run_dir / "logs" / "hiveserver2.log").read_text()
    assert hive_log.count("STARTUP_MSG: Starting HiveServer2") == 2
    shared_log = (shared.run_dir / "logs" / "hiveserver2.log").read_text()
    assert shared_log.count("STARTUP_MSG: Starting HiveServer2") == 1
