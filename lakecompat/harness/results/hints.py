"""The commands lakecompat tells its user to run (complete a run, reproduce a cell), written so
that they work where they are pasted: on the console, as the user started lakecompat, with
paths relative to the current folder; in a run folder's reports, from any folder (`cd` to
where the run started first)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from lakecompat.harness.options import PROJECT_ROOT

#: The folder `--reports` names unless given.
DEFAULT_REPORTS = Path("reports")


def program(on_path: bool = True) -> str:
    """How the user started lakecompat: `lakecompat` when that is what PATH finds (and
    `on_path`), else the script's path (relative to here when below it, e.g.
    `.venv/bin/lakecompat`); `lakecompat` when it was not started as that script."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is None or script.name != "lakecompat":
        return "lakecompat"
    found = shutil.which("lakecompat") if on_path else None
    if found and Path(found).resolve() == script.resolve():
        return "lakecompat"
    return shown(script)


def shown(path: Path) -> str:
    """A path as the user can paste it here: relative to the current folder when below it
    (symbolic links left as they are given, not resolved)."""
    absolute = Path(os.path.abspath(path))
    try:
        text = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        text = str(absolute)
    return shlex.quote(text)


def resume_command(run_dir: Path, reports_dir: Path | None = None) -> str:
    """`<program> run --resume <run folder>`, with `--reports` where the run's reports folder
    (`reports_dir`, else the folder its `runs/` is in) is not the default one."""
    return f"{program()} run --resume {shown(run_dir)}{reports_argument(run_dir, reports_dir)}"


def make_resume_command(run_dir: Path, reports_dir: Path | None = None) -> str:
    """The resume command as `make matrix ARGS=...`, or "" where make cannot run it: the
    project's Makefile is in the current folder only when it is the project's folder."""
    if Path.cwd().resolve() != PROJECT_ROOT or not (PROJECT_ROOT / "Makefile").is_file():
        return ""
    extra = reports_argument(run_dir, reports_dir)
    return f'make matrix ARGS="--resume {shown(run_dir)}{extra}"'


def reports_argument(run_dir: Path, reports_dir: Path | None = None) -> str:
    """` --reports DIR` when the run's reports folder is not the default one, else ""."""
    if reports_dir is None:
        parent = run_dir.resolve().parent
        reports_dir = parent.parent if parent.name == "runs" else DEFAULT_REPORTS
    if reports_dir.resolve() == DEFAULT_REPORTS.resolve():
        return ""
    return f" --reports {shown(reports_dir)}"


def invocation(run_dir: Path, reports_dir: Path | None = None) -> dict[str, str]:
    """What `run.json` records for the commands its reports name (`recorded`): the folder
    the run started in, the program as a path from there (an activated environment may be
    gone when the command is pasted) and the run folder's arguments as from there."""
    return {
        "cwd": str(Path.cwd().resolve()),
        "program": program(on_path=False),
        "run": shown(run_dir),
        "reports": reports_argument(run_dir, reports_dir),
    }


def recorded(info: dict[str, Any], command: str) -> str:
    """A command of a run's reports, which works from any folder: `cd <where the run
    started> && <program> <command>`, where `command` may name `{run}` (the run folder) and
    `{reports}` (its `--reports` argument, or ""). A run from before `run.json` recorded its
    `invocation` gets `lakecompat <command>` with `reports/runs/<id>`."""
    started = info.get("invocation")
    if not started:
        run = f"reports/runs/{info.get('run_id', '<run id>')}"
        return "lakecompat " + command.format(run=run, reports="")
    filled = command.format(run=started["run"], reports=started["reports"])
    return f"cd {shlex.quote(started['cwd'])} && {started['program']} {filled}"
