"""Which catalog run an exploration compares its findings with: a finding is **new** only
against a run of the whole catalog, not against whatever ran last (a one-scenario run would
make every finding look new)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lakecompat.harness.results.store import RUN_FILE
from lakecompat.harness.run.options import DEFAULT_ENGINES
from lakecompat.harness.scenario.model import TABLE_TYPES


def catalog_run(reports_dir: Path, given: Path | None) -> Path | None:
    """The run named by `--catalog-run` (it must exist), else the newest full catalog run
    under `reports_dir/runs/` (`is_full_catalog_run`); None when there is none."""
    if given is not None:
        if not given.exists():
            raise ValueError(f"--catalog-run {given}: not found")
        return given
    full = []
    for run in _folders(reports_dir / "runs"):
        info = _info(run)
        if info is not None and is_full(info):
            full.append((str(info.get("started", "")), run.name, run))
    return max(full)[2] if full else None


def is_full(info: dict[str, Any]) -> bool:
    """Whether `run.json` describes a complete run of the whole catalog: every scenario (no
    `--scenarios` pattern, no shard), both table types, every default engine."""
    engines = set(info.get("engine_order") or info.get("engines") or ())
    return (
        info.get("status", "complete") == "complete"
        and info.get("pattern") is None
        and "shard" not in info
        and set(info.get("table_types") or ()) >= set(TABLE_TYPES)
        and engines >= set(DEFAULT_ENGINES)
    )


def described(catalog: Path | None, given: Path | None, reports_dir: Path) -> str:
    """The sentence of explore.md that says what the findings were compared with."""
    if catalog is None:
        return (
            f"No full catalog run was found under {reports_dir / 'runs'}, so no finding is "
            "marked new; name a run with --catalog-run."
        )
    how = "named with --catalog-run" if given is not None else "the newest full catalog run"
    return f"Compared with the catalog run {catalog} ({how})."


def _folders(runs: Path) -> list[Path]:
    return [path for path in runs.iterdir() if path.is_dir()] if runs.is_dir() else []


def _info(run: Path) -> dict[str, Any] | None:
    """A run folder's `run.json`, or None when it has none or it cannot be read."""
    try:
        return json.loads((run / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None
