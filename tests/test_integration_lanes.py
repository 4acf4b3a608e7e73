"""Integration: a large run's lanes give the cells of a small run.

A run of at least `LANES_FROM_TABLES` tables reads Hive's variants in two HiveServer2s at once
(`Engine.lanes`), and Spark in a Spark of its own beside the writer (`Engine.apart_in_lanes`)
instead of the writer's session. Forced on the shared run's tables, the cells equal those of
the shared run, which read in one HiveServer2 and the writer's Spark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import SCENARIOS, SHARED_SCENARIOS, SharedRun, comparable, processes_mentioning

from lakecompat.engines.hive.reader import HiveEngine
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration


def same_log_names(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with the evidence's log named as in a run without lanes (the evidence names
    the log of the process that answered), in one order."""
    for row in rows:
        if row["evidence"]["log"]:
            log = row["evidence"]["log"].replace("-lane2.log", ".log")
            row["evidence"]["log"] = log.replace("spark-reader.log", "spark.log")
    return sorted(rows, key=lambda row: str(sorted(row.items())))


def test_two_hiveservers_and_a_spark_of_its_own_give_the_cells_of_one_run(
    shared_run: SharedRun, tmp_path: Path
) -> None:
    engines = ("spark", "hive")
    options = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=",".join(SHARED_SCENARIOS),
        engines=engines,
        formats=("hudi",),
        reports_dir=tmp_path,
        lanes=True,
    )
    result = Runner(options, Progress(quiet=True)).run()
    logs = result.run_dir / "logs"
    # Spark read in a JVM of its own. The shared run wrote every table (the control check's
    # too) into the table cache, so this run wrote nothing and started no writer's Spark.
    assert {c.table_from for c in result.cells} == {"cache"}
    assert "SparkConf" in (logs / "spark-reader.log").read_text()
    assert not (logs / "spark.log").exists()
    # The second HiveServer2 ran the queries of its variants, and registered no table but
    # the control check's: the scenario tables are the first one's.
    second = (logs / "hiveserver2-lane2.log").read_text()
    hive = [c for c in result.cells if c.engine == "hive"]
    assert {c.variant for c in hive} == {v.name for v in HiveEngine.reading("hudi").variants}
    first_lane = -(
        -len(HiveEngine.reading("hudi").variants) // 2
    )  # the first lane takes the larger half
    later = {
        v.name for v in HiveEngine.reading("hudi").variants[first_lane:]
    }  # the second lane's share
    queried = [c for c in hive if c.variant in later and c.evidence.sql]
    assert queried and second.count("Completed executing command") >= len(queried)
    assert "CREATE EXTERNAL TABLE `t_" not in second
    assert "CREATE EXTERNAL TABLE `t_" in (logs / "hiveserver2.log").read_text()
    assert processes_mentioning(str(result.run_dir)) == []

    one = comparable(shared_run.of(engines=engines), shared_run.run_dir)
    assert same_log_names(comparable(result.cells, result.run_dir)) == same_log_names(one)
