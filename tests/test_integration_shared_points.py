"""Integration: two version points that write with the same Hudi release share one run.

The points differ only in the Hudi jars HiveServer2 and the Spark reader carry (1.2.0, and
0.15.0: readers lagging behind the writer). `lakecompat qualify` must write each table once,
read it with each distinct reader once (Trino once for both points), and give each point a
run folder whose cells equal those of an ordinary run of that point alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import SharedRun, lakecompat, only_run

from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import load_cells

pytestmark = pytest.mark.integration
SCENARIO = "rename_column/rename"
VERSIONS = """\
points:
  - {name: all-1.2, hudi: 1.2.0}
  - {name: readers-0.15, hudi: 1.2.0, hive_hudi: 0.15.0, spark_hudi: 0.15.0}
"""


def _verdicts(cells: list[Cell]) -> dict[tuple[str, ...], tuple[str, str, str, str]]:
    return {c.key: (c.outcome.value, c.reason, c.engine_version, c.reader_hudi) for c in cells}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reports = tmp_path_factory.mktemp("shared")
    versions = reports / "versions.yaml"
    versions.write_text(VERSIONS)
    done = lakecompat(
        "qualify",
        "--versions",
        versions,
        "--scenarios",
        SCENARIO,
        "--table-types",
        "mor",
        # SELECT * only, as the run it is compared with (conftest.py's lagging_readers_run)
        "--shapes",
        "all",
        "--reports",
        reports,
        cwd=reports,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "run 1/1: all-1.2 (hudi 1.2.0); readers-0.15" in done.stdout, done.stdout[-2000:]
    return reports


def test_points_share_one_run_and_its_tables(shared: Path) -> None:
    first_dir = only_run(shared / "points" / "all-1.2")
    second_dir = only_run(shared / "points" / "readers-0.15")
    first = json.loads((first_dir / "run.json").read_text())
    second = json.loads((second_dir / "run.json").read_text())
    assert first["shared_with"] == [str(second_dir)]
    assert second["shared_with"] == [str(first_dir)]
    assert first["logs_in"] == second["logs_in"] == str(first_dir / "logs")
    assert (first["hive_hudi"], second["hive_hudi"]) == (None, "0.15.0")
    logs = first_dir / "logs"
    # One Metastore, one Trino, and each HiveServer2 and Spark of its own Hudi release.
    for log in ("hive-metastore.log", "trino-server.log", "hiveserver2.log", "spark.log"):
        assert (logs / log).is_file(), log
    assert (logs / "hiveserver2-hudi-0.15.0.log").is_file()
    assert (logs / "spark-hudi-0.15.0.log").is_file()
    # The second point's folder holds its cells and reports, and no engine of its own.
    assert (second_dir / "results.jsonl").is_file() and (second_dir / "matrix.html").is_file()
    assert not (second_dir / "logs").exists()


def test_each_point_has_its_readers_and_trino_is_read_once(shared: Path) -> None:
    _, lagging = load_cells(only_run(shared / "points" / "readers-0.15"))
    _, current = load_cells(only_run(shared / "points" / "all-1.2"))
    assert {c.writer["hudi"] for c in lagging + current} == {"1.2.0"}
    by_engine = {
        engine: (
            {c.reader_hudi for c in current if c.engine == engine},
            {c.reader_hudi for c in lagging if c.engine == engine},
        )
        for engine in ("spark", "hive")
    }
    assert by_engine == {"spark": ({"1.2.0"}, {"0.15.0"}), "hive": ({"1.2.0"}, {"0.15.0"})}
    trino_now = [c for c in current if c.engine == "trino"]
    trino_lag = [c for c in lagging if c.engine == "trino"]
    assert trino_now and [c.to_dict() for c in trino_now] == [c.to_dict() for c in trino_lag]


def test_shared_cells_equal_a_run_of_the_point_alone(
    shared: Path, lagging_readers_run: SharedRun
) -> None:
    # The point alone: the merge-on-read part of a run with HiveServer2 and the Spark reader
    # on Hudi 0.15.0 (conftest.py shares it; it reads copy-on-write tables too).
    alone = lagging_readers_run.of(table_types=("mor",))
    _, shared_cells = load_cells(only_run(shared / "points" / "readers-0.15"))
    assert [c.key for c in shared_cells] == [c.key for c in alone]
    assert _verdicts(shared_cells) == _verdicts(alone)
