"""Integration: a small catalog run whole, and in two shards merged, with the real engines.

`lakecompat run --shard 1/2` and `--shard 2/2` must split the tables between them (the
baselines run in both), and `lakecompat merge` must make a run whose cells equal, cell for
cell and in the same order, those of the unsharded run. The whole run is the session's shared
run (conftest.py); the two shards run at the same time on this machine, as a user may run them,
sharing its cache.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import SHARED_ENGINES, SHARED_SCENARIOS, SharedRun, lakecompat, only_run

from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import load_cells

pytestmark = pytest.mark.integration
OPTIONS = (
    *("--engines", ",".join(SHARED_ENGINES)),
    *("--scenarios", ",".join(SHARED_SCENARIOS)),
    *("--formats", "hudi"),
    "--quiet",
)


def _verdicts(cells: list[Cell]) -> list[tuple[object, ...]]:
    return [(c.key, c.outcome, c.reason, c.engine_version, c.reader_hudi) for c in cells]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, shared_run: SharedRun) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("shards")

    def shard(name: str) -> Path:
        reports = base / name
        index = {"one": "1/2", "two": "2/2"}[name]
        done = lakecompat("run", *OPTIONS, "--shard", index, "--reports", reports, cwd=base)
        assert done.returncode in (0, 1), done.stderr[-3000:]
        (folder,) = (reports / "runs").iterdir()
        return folder

    with ThreadPoolExecutor(2) as both:
        folders = dict(zip(("one", "two"), both.map(shard, ("one", "two")), strict=True))
    return {"whole": shared_run.run_dir, **folders}


def test_shards_split_the_tables_and_each_runs_the_baselines(runs: dict[str, Path]) -> None:
    one = json.loads((runs["one"] / "run.json").read_text())["shard"]
    two = json.loads((runs["two"] / "run.json").read_text())["shard"]
    assert (one["index"], two["index"], one["count"]) == (1, 2, 2)
    assert one["plan"] == two["plan"] and one["tables"] and two["tables"]
    assert not set(one["tables"]) & set(two["tables"])
    assert len(one["tables"]) + len(two["tables"]) == 2 * len(SHARED_SCENARIOS)  # cow, mor
    for name in ("one", "two"):
        _, cells = load_cells(runs[name])
        assert {c.scenario for c in cells if c.category == "baseline"} == {"baseline/no_change"}
        costs = json.loads((runs[name] / "costs.json").read_text())["tables"]
        assert all(seconds > 0 for seconds in costs.values())


def test_merged_shards_equal_the_whole_run(runs: dict[str, Path], tmp_path: Path) -> None:
    done = lakecompat(
        "merge", runs["two"], runs["one"], "--reports", tmp_path / "merged", cwd=tmp_path
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    # A narrowed run's merge: its reports are in its own folder, which the command names.
    folder = only_run(tmp_path / "merged")
    assert f"report: {folder.relative_to(tmp_path)}/matrix.html" in done.stdout
    assert "merged/latest/ was not updated: a narrowed run (--scenarios" in done.stdout
    assert not (tmp_path / "merged" / "latest").exists()
    _, merged = load_cells(folder)
    _, whole = load_cells(runs["whole"])
    assert _verdicts(merged) == _verdicts(whole)
    again = lakecompat("merge", runs["one"], runs["one"], "--reports", tmp_path, cwd=tmp_path)
    assert again.returncode == 2 and "given twice" in again.stderr
