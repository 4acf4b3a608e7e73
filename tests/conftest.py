"""Runs that several integration modules read, made once per test session.

Starting the engines and writing the tables is what makes an integration test slow. Where
modules ask the same question of the same tables (which cells the managed engines give for
a renamed and an added column, say), one run answers all of them, and each module looks at
the cells of the engines, scenarios and table types it is about (`SharedRun.of`): no cell
depends on what else a run read (test_integration_catalog.py's order test checks that).

`make test` runs the suite in two lanes side by side (pytest-xdist, `-n 2`),
each a pytest process of its own that takes its modules one after another: the runs that keep
both cores busy in one, the tests that mostly wait (timeouts, restarts, small runs, unit
tests) in the other, so that one lane's waits are the other's CPU (`lane_of`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import SHARED_ENGINES, SHARED_SCENARIOS, SharedRun, lakecompat

from lakecompat.harness.results.store import load_cells


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


#: The modules of the busy lane: those whose runs keep both cores busy most of the time
#: (bench/bench_suite.py shows it per module), so that no two of them run side by side, and
#: every module that reads `shared_run`, so that it is made once. Every other module, the
#: readers of `lagging_readers_run` among them, runs in the waiting lane.
BUSY_MODULES = frozenset(
    {
        # busy runs of their own
        "test_integration_artifacts.py",
        "test_integration_catalog.py",
        "test_integration_iceberg.py",
        "test_integration_shapes.py",
        "test_integration_table_cache.py",
        # readers of shared_run
        "test_cli.py",
        "test_integration_attached.py",
        "test_integration_hive.py",
        "test_integration_hive_releases.py",
        "test_integration_lanes.py",
        "test_integration_library_readers.py",
        "test_integration_repro.py",
        "test_integration_shards.py",
    }
)


def lane_of(nodeid: str) -> str:
    """The lane of a test (`busy` or `waiting`): its module's, so that a module's fixtures are
    made once."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return "busy" if module in BUSY_MODULES else "waiting"


def misplaced(item: pytest.Item) -> str | None:
    """Why a test cannot run in its lane (a shared run its lane does not make), or None."""
    fixtures = set(getattr(item, "fixturenames", ()))
    lane = lane_of(item.nodeid)
    for run, home in (("shared_run", "busy"), ("lagging_readers_run", "waiting")):
        if run in fixtures and lane != home:
            change = "add it to" if home == "busy" else "take it out of"
            return (
                f"{item.path.name} reads {run}, which the {lane} lane does not make: "
                f"{change} BUSY_MODULES in tests/conftest.py"
            )
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a misplaced test before its fixtures are made, saying what to change (an error at
    collection would not reach the user through xdist's workers)."""
    reason = misplaced(item)
    if reason:
        pytest.fail(reason, pytrace=False)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `-n`, hand each lane whole to a worker (xdist's scheduling by scope, the lane being
    the scope)."""
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return lane_of(nodeid)

    return Lanes(config, log)


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
