"""Which catalog run `explore` compares its findings with: the one named, else the newest
complete run of the whole catalog, never merely the last run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakecompat.harness.explore.catalog import catalog_run, described
from lakecompat.harness.run.options import DEFAULT_ENGINES

FULL: dict[str, Any] = {
    "pattern": None,
    "table_types": ["cow", "mor"],
    "engine_order": list(DEFAULT_ENGINES),
    "status": "complete",
}


def run(reports: Path, name: str, started: str, **changes: Any) -> Path:
    folder = reports / "runs" / name
    folder.mkdir(parents=True)
    info = {**FULL, "run_id": name, "started": started, **changes}
    (folder / "run.json").write_text(json.dumps({k: v for k, v in info.items() if v != "-"}))
    return folder


def test_the_newest_complete_run_of_the_whole_catalog_is_chosen(tmp_path: Path) -> None:
    run(tmp_path, "a", "2026-01-01T00:00:00+00:00")
    chosen = run(tmp_path, "b", "2026-01-02T00:00:00+00:00")
    # Newer, but none of them a complete run of the whole catalog:
    run(tmp_path, "c", "2026-01-03T00:00:00+00:00", pattern="rename_column/*")
    run(tmp_path, "d", "2026-01-04T00:00:00+00:00", status="interrupted")
    run(tmp_path, "e", "2026-01-05T00:00:00+00:00", shard={"index": 1, "count": 2})
    run(tmp_path, "f", "2026-01-06T00:00:00+00:00", engine_order=["spark"])
    run(tmp_path, "g", "2026-01-07T00:00:00+00:00", table_types=["cow"])
    run(tmp_path, "h", "2026-01-08T00:00:00+00:00", status="running")
    (tmp_path / "runs" / "i").mkdir()  # no run.json
    assert catalog_run(tmp_path, None) == chosen
    assert described(chosen, None, tmp_path) == (
        f"Compared with the catalog run {chosen} (the newest full catalog run)."
    )


def test_a_run_from_before_run_status_was_recorded_counts(tmp_path: Path) -> None:
    legacy = run(tmp_path, "a", "2026-01-01T00:00:00+00:00", status="-")
    assert catalog_run(tmp_path, None) == legacy


def test_a_run_with_more_than_the_default_engines_counts(tmp_path: Path) -> None:
    wider = run(tmp_path, "a", "2026-01-01", engine_order=[*DEFAULT_ENGINES, "flink"])
    assert catalog_run(tmp_path, None) == wider


def test_the_named_run_wins_whatever_it_ran(tmp_path: Path) -> None:
    run(tmp_path, "full", "2026-01-02")
    named = run(tmp_path, "small", "2026-01-01", pattern="baseline/*")
    assert catalog_run(tmp_path, named) == named
    assert "(named with --catalog-run)" in described(named, named, tmp_path)
    with pytest.raises(ValueError, match=r"--catalog-run .*nope: not found"):
        catalog_run(tmp_path, tmp_path / "nope")


def test_without_a_full_catalog_run_nothing_is_compared(tmp_path: Path) -> None:
    run(tmp_path, "small", "2026-01-01", pattern="baseline/*")
    assert catalog_run(tmp_path, None) is None
    assert catalog_run(tmp_path / "empty", None) is None
    assert described(None, None, tmp_path).startswith(
        f"No full catalog run was found under {tmp_path / 'runs'}, so no finding is marked new"
    )
