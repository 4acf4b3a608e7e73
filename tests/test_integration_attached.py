"""Integration: engines started outside lakecompat's process tree, attached to a run.

`scripts/start_services.py` starts a Spark standalone master and worker, a Hive Metastore, a
HiveServer2 and a Trino on 127.0.0.1, the way an operator would, in a session of its own
(`setsid`). Runs attached to them must give the cells a run with lakecompat's own engines
gives, must leave nothing of theirs on the services, and must leave the services running.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ROOT, SharedRun, lakecompat

from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_cells

pytestmark = pytest.mark.integration
SCENARIOS = "rename_column/rename,add_column/at_end"
MANAGED_SCENARIOS = ("baseline/no_change", *SCENARIOS.split(","))
OPTIONS = ("--scenarios", SCENARIOS, "--formats", "hudi", "--shapes", "all", "--quiet")
#: First use provisions Trino, Hive and Spark's Hudi bundle (downloads): allow for it.
START_TIMEOUT = 1200


def _verdicts(cells: list[Cell]) -> list[tuple[object, ...]]:
    return [(c.key, c.outcome, c.reason, c.engine_version, c.reader_hudi) for c in cells]


def _get_json(url: str) -> object:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers={"X-Trino-User": "lakecompat"})
    with opener.open(request, timeout=60) as response:  # a busy Trino may answer slowly
        return json.loads(response.read())


def _answers(address: str) -> bool:
    host, port = address.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=30):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The operator's services, and their addresses (`attach.json`)."""
    home = tmp_path_factory.mktemp("operator")
    log = (home / "start_services.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "start_services.py"), "--home", str(home)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # setsid: not in the test's (or any run's) process group
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (home / "attach.json").is_file():
            output = (home / "start_services.log").read_text(errors="replace")[-3000:]
            assert process.poll() is None, f"the services did not start:\n{output}"
            assert time.monotonic() < deadline, f"the services did not start in time:\n{output}"
            time.sleep(1)
        found = json.loads((home / "attach.json").read_text())
        found["home"] = str(home)
        yield found
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have stopped on its own
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=180)
        log.close()


def _attach(services: dict[str, str], *keys: str) -> list[str]:
    return [part for key in keys for part in (f"--{key.replace('_', '-')}", services[key])]


@pytest.fixture(scope="module")
def managed(shared_run: SharedRun) -> list[Cell]:
    """The cells of the same catalog with lakecompat's own engines (a part of the run
    conftest.py shares: its cells of these engines and scenarios, in its order)."""
    return shared_run.of(engines=("spark", "hive", "trino"), scenarios=MANAGED_SCENARIOS)


def _attached_run(tmp_path: Path, *args: str) -> tuple[Path, list[Cell]]:
    done = lakecompat("run", *OPTIONS, *args, "--reports", tmp_path, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir, load_cells(run_dir)[1]


@pytest.fixture(scope="module")
def attached(
    services: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[Cell], set[Path]]:
    """A run with every engine attached: the writer and the Spark reader on the standalone
    cluster, Hive and Trino on the operator's Metastore. Its folder, its cells, and the
    executor folders the Spark worker made for it."""
    worker = Path(services["home"]) / "spark-worker"
    before = set(worker.glob("app-*"))
    keys = ("spark_master", "metastore", "hiveserver2", "hiveserver2_log", "trino", "warehouse")
    run_dir, cells = _attached_run(
        tmp_path_factory.mktemp("attached"),
        *("--engines", "spark,hive,trino"),
        *_attach(services, *keys),
    )
    return run_dir, cells, set(worker.glob("app-*")) - before


def test_a_spark_standalone_cluster_runs_the_writer_and_the_spark_reader(
    services: dict[str, str], managed: list[Cell], attached: tuple[Path, list[Cell], set[Path]]
) -> None:
    run_dir, cells, executors = attached
    spark = [c for c in cells if c.engine == "spark"]
    assert _verdicts(spark) == _verdicts([c for c in managed if c.engine == "spark"])
    assert json.loads((run_dir / "run.json").read_text())["attached"]["spark_master"]
    # The jobs ran on the cluster: the worker ran an executor for the run's application.
    assert len(executors) == 1
    completed = _get_json(services["spark_master_ui"])["completedapps"]  # type: ignore[index]
    assert any(app["name"] == "lakecompat" for app in completed)
    assert _answers(services["spark_master"])


def test_attached_trino_hive_and_metastore_give_the_managed_cells(
    services: dict[str, str], managed: list[Cell], attached: tuple[Path, list[Cell], set[Path]]
) -> None:
    run_dir, cells, _ = attached
    assert _verdicts(cells) == _verdicts(managed)
    assert any(c.outcome is Outcome.WRONG for c in cells)  # a comparison with something in it
    info = json.loads((run_dir / "run.json").read_text())["attached"]
    assert info["database"].startswith("lakecompat_" + run_dir.name.replace("-", "_"))
    assert Path(info["tables"]).parent == Path(services["warehouse"])
    # Nothing of the run is left on the services: no database, no table folder.
    from hmsclient import hmsclient

    host, port = services["metastore"].removeprefix("thrift://").split(":")
    with hmsclient.HMSClient(host=host, port=int(port)) as client:
        assert info["database"] not in client.get_all_databases()
    assert not Path(info["tables"]).exists()
    # And the services still run: lakecompat stopped none of them.
    trino = _get_json(services["trino"] + "/v1/info")
    assert trino["starting"] is False  # type: ignore[index]
    assert _answers(services["hiveserver2"]) and _answers(services["metastore"])
    assert "trino" not in os.listdir(run_dir) and "hiveserver2" not in os.listdir(run_dir)


def test_a_query_that_runs_too_long_is_cancelled_and_the_attached_engine_kept(
    services: dict[str, str], tmp_path: Path
) -> None:
    # Every read of these engines takes longer than 0.05 s (a busy machine only makes them
    # slower). Registering the tables and the control check are not queries: they have a
    # bound of their own, so however slow the machine they are not cut short.
    keys = ("metastore", "hiveserver2", "trino", "warehouse")
    run_dir, cells = _attached_run(
        tmp_path,
        *("--engines", "hive,trino", "--table-types", "cow", "--query-timeout", "0.05"),
        *_attach(services, *keys),
    )
    reasons = {c.reason for c in cells}
    assert not any("could not register" in reason for reason in reasons), reasons
    timed_out = {c.engine for c in cells if c.reason == "timeout after 0.05 s"}
    assert timed_out == {"hive", "trino"}, reasons
    assert not any(c.outcome is Outcome.ENGINE_FAILED for c in cells), reasons
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert {e["event"] for e in events} == {"attached_engine"}
    assert not any(e.get("failed") for e in events)
    # Trino cancelled the queries it was running; both services still answer.
    queries = _get_json(services["trino"] + "/v1/query")
    states = [q.get("errorCode", {}).get("name") for q in queries]  # type: ignore[union-attr]
    assert "USER_CANCELED" in states, states
    assert _answers(services["hiveserver2"]) and _answers(services["trino"])
