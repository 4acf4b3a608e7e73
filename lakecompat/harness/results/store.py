"""The results store: one JSON line per cell, appended and flushed the moment it is known."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.hints import resume_command
from lakecompat.harness.results.outcomes import Cell, Outcome, Totals

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"
SCHEMA_VERSION = 4


class ResultsError(ValueError):
    """A run directory without readable results."""


class ResultsWriter:
    """Appends cells to `results.jsonl`; a crash keeps every line written before it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / RESULTS_FILE
        self._file = self.path.open("a", encoding="utf-8")

    def append(self, cell: Cell) -> None:
        self._file.write(json.dumps(cell.to_dict(), sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


EVENTS_FILE = "events.jsonl"


def record_event(run_dir: Path, event: dict[str, Any]) -> None:
    """Append what happened to the run besides cells (an engine restart, ...) to events.jsonl."""
    stamped = {"time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **event}
    with (run_dir / EVENTS_FILE).open("a", encoding="utf-8") as events:
        events.write(json.dumps(stamped, sort_keys=True) + "\n")


def write_run_info(run_dir: Path, info: dict[str, Any]) -> None:
    """Record what the run was (id, versions, engines, arguments) beside its results."""
    (run_dir / RUN_FILE).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")


def load_run(run_dir: Path) -> tuple[dict[str, Any], list[Cell]]:
    """Read a run directory back: its info and every complete cell line."""
    results = run_dir / RESULTS_FILE
    if not results.is_file():
        raise ResultsError(f"{run_dir}: no {RESULTS_FILE} here; is this a lakecompat run folder?")
    info_path = run_dir / RUN_FILE
    info = json.loads(info_path.read_text()) if info_path.is_file() else {}
    cells = []
    for number, line in enumerate(results.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cells.append(Cell.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            # A line cut short by a crash is the only expected damage; say which one it was.
            raise ResultsError(f"{results}:{number}: unreadable cell ({exc})") from None
    return info, cells


def count_cells(run_dir: Path) -> int:
    """How many cells a run folder's results file holds (its non-empty lines)."""
    with (run_dir / RESULTS_FILE).open(encoding="utf-8") as lines:
        return sum(1 for line in lines if line.strip())


def unfinished(run_dir: Path, info: dict[str, Any], cells: list[Cell]) -> str:
    """Why a run folder's cells do not answer for the whole run, in a sentence; "" when they
    do. Run folders from before `run.json` had a `status` count as finished when they have
    cells."""
    status = info.get("status", "complete")
    error = info.get("error") or "no reason recorded"
    resume = f"complete it with `{resume_command(run_dir)}`"
    if not cells:
        if status == "failed":
            return f"{run_dir}: the run could not start ({error}); it has no cells to report"
        return f"{run_dir}: the run has no cells (it stopped before any cell was measured)"
    done = f"{len(cells)} cells"
    if status == "interrupted":
        return f"{run_dir}: the run was interrupted after {done}; {resume}"
    if status == "failed":
        return f"{run_dir}: the run failed after {done} ({error}); {resume}"
    if status != "complete":
        return (
            f"{run_dir}: the run has not finished ({done} so far; it is still running, or its "
            f"process was killed); when it is not running, {resume}"
        )
    return ""


def _tables(judged: list[Judged]) -> dict[str, int]:
    """`total`: the tables the cells read (scenario, format, table type); `refused`: those the
    writer refused, each once (their cells are `REJECTED`, one per reader cell)."""
    totals = Totals.of(r.cell for r in judged)
    return {"total": totals.tables, "refused": totals.refused}


def results_document(info: dict[str, Any], judged: list[Judged]) -> dict[str, Any]:
    """The versioned `results.json` document that reports and CI read (docs/results.md)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run": info,
        "totals": {
            "outcomes": {o.value: sum(r.cell.outcome is o for r in judged) for o in Outcome},
            "verdicts": {v.value: sum(r.verdict is v for r in judged) for v in Verdict},
            "tables": _tables(judged),
        },
        "cells": [row.to_dict() for row in judged],
    }


def load_cells(path: Path) -> tuple[dict[str, Any], list[Cell]]:
    """A run's info and cells from a run folder, a reports folder or a `results.json` file."""
    if path.is_dir() and (path / RESULTS_FILE).is_file():
        return load_run(path)
    document = path / "results.json" if path.is_dir() else path
    if not document.is_file():
        raise ResultsError(
            f"{path}: neither a run folder ({RESULTS_FILE}) nor a results.json was found"
        )
    try:
        data = json.loads(document.read_text(encoding="utf-8"))
        return data.get("run", {}), [Cell.from_dict(c) for c in data["cells"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ResultsError(f"{document}: not a lakecompat results.json ({exc})") from None
