"""The qualification's folder (`--out`, default `<reports>/qualify/`) and what it records of a
qualification of version points in `qualification.json`: the plan (its points), the cells it
chose (`RunOptions` as the command line made them) and each point's run folder as soon as the
run has made it. An interrupted qualification is completed from that file alone
(`lakecompat qualify --resume FOLDER`): finished points are kept, unfinished point runs are
completed like `lakecompat run --resume`, points never started are run."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lakecompat.harness.qualify.versions import VersionPlan
from lakecompat.harness.results.hints import program, shown
from lakecompat.harness.results.store import ResultsError
from lakecompat.harness.run.folder import run_record
from lakecompat.harness.run.interrupt import RunInterrupted
from lakecompat.harness.run.options import RunOptions

RECORD_FILE = "qualification.json"
#: The run options a qualification chooses its cells with (what `selection` gives), and
#: those of them that are paths.
CHOSEN = (
    "scenarios_dir",
    "pattern",
    "formats",
    "engines",
    "table_types",
    "shapes",
    "reports_dir",
    "expectations_dir",
    "table_cache",
)
_PATHS = ("scenarios_dir", "reports_dir", "expectations_dir", "table_cache")


@dataclass
class Record:
    """A qualification of version points, as its folder records it."""

    folder: Path
    plan: VersionPlan
    options: RunOptions
    #: Each point's run folder, by point name, once its run has made it.
    runs: dict[str, Path] = field(default_factory=dict)
    #: running, interrupted, failed or complete.
    status: str = "running"

    def save(self) -> None:
        """Write `qualification.json` (the folder is made when missing)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        chosen = {name: getattr(self.options, name) for name in CHOSEN}
        document = {
            "status": self.status,
            "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "plan": self.plan.model_dump(mode="json", exclude_none=True),
            "options": {k: str(v) if k in _PATHS and v else v for k, v in chosen.items()},
            "runs": {name: str(path) for name, path in self.runs.items()},
        }
        (self.folder / RECORD_FILE).write_text(json.dumps(document, indent=2) + "\n")

    def note_runs(self, names: list[str], run_dirs: list[Path]) -> None:
        """Record the run folders of the points `names` (in order), as soon as they exist."""
        self.runs.update(zip(names, run_dirs, strict=True))
        self.save()

    def mark(self, status: str) -> None:
        """Record where the qualification stands: running, interrupted, failed, complete."""
        self.status = status
        self.save()

    def run_status(self, name: str) -> str:
        """The status of a point's run: `not started` (no run folder, or one whose engines
        never started: nothing to resume), else its `run.json`'s (complete, interrupted,
        failed, running)."""
        run_dir = self.runs.get(name)
        info = run_record(run_dir) if run_dir else {}
        if "writer" not in info:
            return "not started"
        return str(info.get("status", "complete"))


def new_record(folder: Path, plan: VersionPlan, options: RunOptions) -> Record:
    """The record of a qualification about to start, saved; its paths absolute, so that it can
    be completed from any folder."""
    chosen = {
        name: Path(value).resolve() if name in _PATHS and value else value
        for name, value in ((n, getattr(options, n)) for n in CHOSEN)
    }
    record = Record(folder, plan, replace(options, **chosen))
    record.save()
    return record


def load_record(folder: Path) -> Record:
    """The qualification recorded in `folder`; `ResultsError` naming the folder when there is
    none."""
    path = folder / RECORD_FILE
    if not path.is_file():
        raise ResultsError(
            f"{folder}: no {RECORD_FILE} here, so no qualification of version points to resume "
            "(give the folder a qualification wrote its reports to: --out, default "
            "reports/qualify)"
        )
    try:
        document: dict[str, Any] = json.loads(path.read_text())
        chosen = dict(document["options"])
        plan = VersionPlan.model_validate(document["plan"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ResultsError(f"{path}: not a lakecompat qualification record ({exc})") from None
    for name in _PATHS:
        chosen[name] = Path(chosen[name]) if chosen.get(name) else None
    for name in ("formats", "engines", "table_types", "shapes"):
        chosen[name] = tuple(chosen[name])
    runs = {name: Path(run_dir) for name, run_dir in document.get("runs", {}).items()}
    return Record(folder, plan, RunOptions(**chosen), runs, document.get("status", "running"))


def resume_command(folder: Path) -> str:
    """`<program> qualify --resume <folder>`, as the user can paste it where they are."""
    return f"{program()} qualify --resume {shown(folder)}"


class QualificationInterrupted(RunInterrupted):
    """A qualification stopped by a signal: its points' finished cells are kept, and the
    message gives the command that completes the qualification (not one point's run)."""

    def __init__(self, folder: Path, stopped: RunInterrupted | None, done: list[str]) -> None:
        """`stopped`: the point run the signal stopped, if one was running; `done`: the
        points measured before it."""
        if stopped is None:
            super().__init__([], 0, folder)
        else:
            super().__init__(stopped.run_dirs, stopped.finished, stopped.reports_dir)
        self.folder = folder
        self.done = done

    def message(self) -> str:
        """Where the cells are, and the command that completes the qualification."""
        kept = []
        if self.run_dirs:
            where = " and ".join(shown(path) for path in self.run_dirs)
            kept.append(f"{self.finished} finished cells are kept in {where}")
        if self.done:
            kept.append(f"the points measured already are kept ({', '.join(self.done)})")
        said = "; ".join(kept) or "no point had finished a cell yet"
        return "\n".join(
            [
                f"lakecompat: interrupted; {said}.",
                f"Complete the qualification with: {resume_command(self.folder)}",
            ]
        )
