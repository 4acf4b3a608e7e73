"""Integration: the benchmark's warm re-run.

A scenario re-run against the warm engines at the end of a run gives exactly the cells of
the ordinary run. (Engines restarted before each scenario, the benchmark's other mode, are
tested in test_integration_catalog.py: they must give the same cells as shared engines.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SCENARIOS, comparable

from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.run.options import RunOptions, RunResult
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
PATTERN = "rename_column/rename"


def run(reports: Path, **options: object) -> RunResult:
    settings = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=PATTERN,
        engines=("spark", "hive"),
        formats=("hudi",),
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
    assert len(first) == 3 * (2 + 5)  # cow: 3 query types; Spark 2 and Hive 5 variants
    # Same tables folder: the writer wrote the scenario's table again in place.
    assert comparable(shared.rerun_cells, shared.run_dir) == comparable(first, shared.run_dir)
    # The re-run is not part of the run: its results were not recorded, and are deleted.
    assert len(shared.cells) == len(first) + len(of_scenario(shared.cells, "baseline/no_change"))
    assert not (shared.run_dir / "rerun").exists()
