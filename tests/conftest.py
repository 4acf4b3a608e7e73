"""Runs that several integration modules read, made once per test session.

Starting the engines and writing the tables is what makes an integration test slow. Where
modules ask the same question of the same tables (which cells the managed engines give for
a renamed and an added column, say), one run answers all of them, and each module looks at
the cells of the engines, scenarios and table types it is about (`SharedRun.of`): no cell
depends on what else a run read (test_integration_catalog.py's order test checks that).

`make test` runs the suite in two lanes side by side (pytest-xdist, `-n 2 --dist loadgroup`),
each a pytest process of its own that takes its modules one after another: the runs that keep
both cores busy in one, the tests that mostly wait (timeouts, restarts, small runs, unit
tests) in the other, so that one lane's waits are the other's CPU (`lane_of`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import SHARED_ENGINES, SHARED_SCENARIOS, SharedRun, lakecompat

from harness.results.store import load_cells


@pytest.fixture(scope="session")
def shared_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """The default engines (SHARED_ENGINES) on two scenarios and both table types, run through
    the console script as the README shows it: from a project folder, into `reports/`, with its
    progress printed.

    Read by test_cli (what the console script prints), test_integration_attached (the managed
    run attached runs must equal), test_integration_hive, test_integration_library_readers
    (hudi-rs and Daft), test_integration_repro (the run whose cells are reproduced) and
    test_integration_shards (the whole run the shards must add up to)."""
    return console_run(
        tmp_path_factory.mktemp("shared-run"),
        *("--scenarios", ",".join(SHARED_SCENARIOS), "--formats", "hudi"),
        quiet=False,
    )


@pytest.fixture(scope="session")
def lagging_readers_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """The default engines on a renamed column (and the baseline), both table types, with
    HiveServer2 and the Spark reader on Hudi 0.15.0's jars while the writer is on 1.2.0
    (version skew), run through the console script.

    Read by test_integration_qualify (HiveServer2 on the older jars), test_integration_
    writer_upgrade (the Spark reader on them) and test_integration_shared_points (the
    merge-on-read part: the point of a shared qualification, run alone)."""
    return console_run(
        tmp_path_factory.mktemp("lagging-readers"),
        *("--engines", ",".join(SHARED_ENGINES), "--scenarios", "rename_column/rename"),
        *("--formats", "hudi"),
        # SELECT * only: the older readers' shaped reads have no reviewed known outcomes yet
        *("--shapes", "all"),
        *("--hive-hudi-version", "0.15.0", "--spark-hudi-version", "0.15.0"),
    )


#: Modules whose runs keep both cores busy most of the time (bench/bench_suite.py shows it
#: per module): they share a lane, so that no two of them run side by side.
BUSY_MODULES = frozenset(
    {
        "test_integration_artifacts.py",
        "test_integration_catalog.py",
        "test_integration_explore.py",
        "test_integration_iceberg.py",
        "test_integration_shapes.py",
        "test_integration_table_cache.py",
    }
)


def lanes(items: list[pytest.Item]) -> dict[Path, str]:
    """The lane of each module: `busy` for the busy modules and for every module that reads
    `shared_run` (made once, in that lane), `waiting` for the rest, the modules that read
    `lagging_readers_run` among them. A module runs whole in one lane, so that its own
    fixtures are made once."""
    reads: dict[Path, set[str]] = {}
    for item in items:
        reads.setdefault(item.path, set()).update(getattr(item, "fixturenames", ()))
    lane = {}
    for module, fixtures in reads.items():
        if {"shared_run", "lagging_readers_run"} <= fixtures:
            raise pytest.UsageError(
                f"{module.name} reads both shared runs, which are made in different lanes"
            )
        busy = "shared_run" in fixtures or module.name in BUSY_MODULES
        lane[module] = "busy" if busy else "waiting"
    return lane


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every test in its module's lane (`lanes`); without `-n` the lanes change nothing."""
    lane = lanes(items)
    for item in items:
        item.add_marker(pytest.mark.xdist_group(lane[item.path]))


def console_run(project: Path, *options: str, quiet: bool = True) -> SharedRun:
    """`lakecompat run OPTIONS --reports reports [--quiet]` in `project`, as the README shows
    it; a run that judged its cells (exit 0 or 1) is the session's to share."""
    done = lakecompat(
        "run", *options, "--reports", "reports", *(["--quiet"] if quiet else []), cwd=project
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (run_dir,) = (project / "reports" / "runs").iterdir()
    _, cells = load_cells(run_dir)
    return SharedRun(project, run_dir, done.returncode, cells, done.stdout, done.stderr)
