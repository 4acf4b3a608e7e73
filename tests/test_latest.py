"""`reports/latest/`: only a completed run of the default matrix becomes it, whole and at
once; a narrowed run says why it did not."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from support import SCENARIOS

from lakecompat.harness.report.render import REPORT_FILES
from lakecompat.harness.run import latest
from lakecompat.harness.run.latest import LATEST, narrowing, publish
from lakecompat.harness.run.options import DEFAULT_FORMATS, default_engines
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES

#: What `run.json` records of a run of the default matrix.
DEFAULT_RUN: dict[str, Any] = {
    "pattern": None,
    "formats": list(DEFAULT_FORMATS),
    "engine_order": list(reversed(default_engines(DEFAULT_FORMATS))),  # the order is not asked
    "table_types": ["cow", "mor"],
    "shapes": list(DEFAULT_SHAPES),
    "variants": "all",
    "engine_settings": {},
    "writer": {"hudi": "1.0.2"},  # releases do not narrow
}


def test_the_default_matrix_is_not_narrowed() -> None:
    assert narrowing(DEFAULT_RUN, SCENARIOS) == []


@pytest.mark.parametrize(
    ("change", "option"),
    [
        ({"pattern": "rename_column/*"}, "--scenarios"),
        ({"formats": ["hudi"], "engine_order": list(default_engines(("hudi",)))}, "--formats"),
        ({"engine_order": ["spark", "trino"]}, "--engines"),
        ({"engine_order": [*default_engines(DEFAULT_FORMATS), "flink"]}, "--engines"),
        ({"table_types": ["cow"]}, "--table-types"),
        ({"shapes": ["all"]}, "--shapes"),
        ({"variants": "default"}, "--variants default"),
        ({"engine_settings": {"spark": {"k": "v"}}}, "--set"),
        ({"shard": {"index": 1, "count": 2}}, "--shard"),
    ],
)
def test_each_narrowing_is_named(change: dict[str, Any], option: str) -> None:
    assert narrowing({**DEFAULT_RUN, **change}, SCENARIOS) == [option]


def test_another_scenario_folder_is_not_the_default_matrix(tmp_path: Path) -> None:
    assert narrowing(DEFAULT_RUN, tmp_path) == ["--scenario-dir"]


def fake_run(reports: Path, run_id: str) -> Path:
    """A run folder whose every report names its run."""
    run_dir = reports / "runs" / run_id
    run_dir.mkdir(parents=True)
    for name in REPORT_FILES:
        (run_dir / name).write_text(f"{run_id} {name}\n")
    return run_dir


def shown_run(reports: Path) -> str:
    """The run every report in `latest/` names (an error if they differ, or one is missing),
    read from the one folder `latest/` was when it was opened."""
    folder = os.open(reports / LATEST, os.O_RDONLY | os.O_DIRECTORY)
    try:
        names = set()
        for name in REPORT_FILES:
            with open(name, opener=lambda path, flags: os.open(path, flags, dir_fd=folder)) as f:
                names.add(f.read().split()[0])
    finally:
        os.close(folder)
    assert len(names) == 1, names
    return names.pop()


def test_a_narrowed_run_leaves_latest_to_the_last_full_run(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    full = publish(fake_run(reports, "full"), reports, DEFAULT_RUN, SCENARIOS)
    assert full.updated and full.line().endswith("latest/ was updated with this run's reports")
    narrowed = {**DEFAULT_RUN, "pattern": "rename_column/*", "table_types": ["mor"]}
    small = publish(fake_run(reports, "small"), reports, narrowed, SCENARIOS)
    assert not small.updated
    assert small.why.startswith("a narrowed run (--scenarios, --table-types); ")
    assert small.why.endswith("latest/ keeps the last full run")
    assert shown_run(reports) == "full"


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two renames"])
def test_a_new_full_run_replaces_latest_and_leaves_nothing_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if exchange:  # this machine swaps folders in one step
        (tmp_path / "a").mkdir()
        (tmp_path / "b" / "inside").mkdir(parents=True)
        assert latest._exchange(tmp_path / "a", tmp_path / "b")
        assert (tmp_path / "a" / "inside").is_dir()
    else:  # a system without renameat2 (or a file system that refuses it)
        monkeypatch.setattr(latest, "_exchange", lambda one, other: False)
    reports = tmp_path / "reports"
    (reports / LATEST).mkdir(parents=True)  # a latest/ from before, with a file of its own
    (reports / LATEST / "old.html").write_text("old")
    for run_id in ("first", "second"):
        publish(fake_run(reports, run_id), reports, DEFAULT_RUN, SCENARIOS)
        assert shown_run(reports) == run_id
    assert (reports / LATEST).is_dir() and not (reports / LATEST).is_symlink()
    assert sorted(p.name for p in (reports / LATEST).iterdir()) == sorted(REPORT_FILES)
    assert sorted(p.name for p in reports.iterdir()) == [".latest.lock", LATEST, "runs"]


def _publish_again_and_again(reports: Path, run_id: str, times: int) -> None:
    run_dir = reports / "runs" / run_id
    for _ in range(times):
        publish(run_dir, reports, DEFAULT_RUN, SCENARIOS)


def test_two_runs_finishing_together_never_mix_their_files(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    for run_id in ("one", "two"):
        fake_run(reports, run_id)
    publish(reports / "runs" / "one", reports, DEFAULT_RUN, SCENARIOS)
    context = multiprocessing.get_context("spawn")
    writers = [
        context.Process(target=_publish_again_and_again, args=(reports, run_id, 40))
        for run_id in ("one", "two")
    ]
    for writer in writers:
        writer.start()
    seen = set()
    while any(writer.is_alive() for writer in writers):
        try:
            seen.add(shown_run(reports))
        except FileNotFoundError:  # the folder we resolved was swapped out and deleted
            continue
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert seen <= {"one", "two"}
    shown_run(reports)
    assert sorted(p.name for p in reports.iterdir()) == [".latest.lock", LATEST, "runs"]
