"""`<reports>/latest/`: the reports of the last complete run of the default matrix, and
nothing else.

A run's reports are always in its own folder (`runs/<id>/`). A completed run also becomes
`latest/` when it measured the default matrix (`narrowing` says what does not count), so that
a quick run of a few scenarios never replaces the full matrix's report. Its reports are copied
into a new folder beside `latest/`, which then takes `latest/`'s place in one step (Linux's
renameat2 exchanges the two folders; elsewhere two renames, with a moment without `latest/`),
under a lock: a reader finds one run's reports whole, and two runs finishing together never
mix their files. `latest/` stays a plain folder, for every tool that copies or uploads it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakecompat.engines.formats import ORIGINAL
from lakecompat.harness.locks import locked
from lakecompat.harness.options import DEFAULT_SCENARIOS
from lakecompat.harness.report.render import REPORT_FILES
from lakecompat.harness.results.hints import shown
from lakecompat.harness.run.options import DEFAULT_FORMATS, default_engines
from lakecompat.harness.scenario.model import TABLE_TYPES
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES

LATEST = "latest"
#: Held while `latest/` is replaced (beside it).
LOCK = ".latest.lock"
#: renameat2's "the current folder" and "exchange the two paths" (linux/fcntl.h, linux/fs.h).
AT_FDCWD = -100
RENAME_EXCHANGE = 2


@dataclass(frozen=True)
class Published:
    """Whether a run became `latest/`, and why not (`why` "" when it did)."""

    latest: Path
    why: str = ""

    @property
    def updated(self) -> bool:
        return not self.why

    def line(self) -> str:
        """What the console says of `latest/` after a run."""
        if self.updated:
            return f"{shown(self.latest)}/ was updated with this run's reports"
        return f"{shown(self.latest)}/ was not updated: {self.why}"


def narrowing(info: dict[str, Any], scenarios_dir: Path) -> list[str]:
    """What made the run recorded in `info` (its `run.json`) other than the default matrix:
    the options, as the user gave them ([] for the default matrix).

    The default matrix: the project's scenario folder, every scenario, the default table
    formats, exactly the default engines, both table types, the default query shapes, every
    variant, no reader settings, not one shard (a merge of every shard counts). Releases
    (`--hudi-version`, `$LAKECOMPAT_*_VERSION`, ...) and attached services do not narrow it:
    the reports name them.
    """
    written = tuple(info.get("formats") or (ORIGINAL,))
    engines = info.get("engine_order") or list(info.get("engines") or {})
    checks = [
        ("--scenario-dir", scenarios_dir.resolve() != DEFAULT_SCENARIOS.resolve()),
        ("--scenarios", bool(info.get("pattern"))),
        ("--formats", set(written) != set(DEFAULT_FORMATS)),
        # Against the engines of the run's formats: `--formats hudi` alone narrows by format.
        ("--engines", set(engines) != set(default_engines(written))),
        ("--table-types", set(info.get("table_types") or ()) != set(TABLE_TYPES)),
        ("--shapes", set(info.get("shapes") or ("all",)) != set(DEFAULT_SHAPES)),
        ("--variants default", (info.get("variants") or "all") != "all"),
        ("--set", bool(info.get("engine_settings"))),
        ("--shard", bool(info.get("shard"))),
    ]
    return [option for option, narrowed in checks if narrowed]


def publish(
    run_dir: Path, reports_dir: Path, info: dict[str, Any], scenarios_dir: Path
) -> Published:
    """Make the completed run in `run_dir` (its reports rendered) `<reports_dir>/latest/` when
    it is the default matrix; say why not otherwise."""
    latest = reports_dir / LATEST
    options = narrowing(info, scenarios_dir)
    if options:
        why = f"a narrowed run ({', '.join(options)}); {shown(latest)}/ keeps the last full run"
        return Published(latest, why)
    swap_in(run_dir, reports_dir)
    return Published(latest)


def swap_in(run_dir: Path, reports_dir: Path) -> None:
    """Copy the run's reports into a new folder beside `latest/` and put it in its place in
    one step; the folder it replaces is deleted."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    with locked(reports_dir / LOCK):
        folder = Path(tempfile.mkdtemp(prefix=f".{LATEST}-{run_dir.name}-", dir=reports_dir))
        for name in REPORT_FILES:
            shutil.copyfile(run_dir / name, folder / name)
        folder.chmod(0o755)
        latest = reports_dir / LATEST
        if not latest.exists():
            folder.rename(latest)
        elif _exchange(folder, latest):
            shutil.rmtree(folder)  # now the folder latest/ was
        else:
            aside = folder.with_name(f"{folder.name}-old")
            latest.rename(aside)
            folder.rename(latest)
            shutil.rmtree(aside)


def _exchange(one: Path, other: Path) -> bool:
    """Swap two folders in one step (renameat2 with RENAME_EXCHANGE); False where the system
    or the file system cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(AT_FDCWD, os.fsencode(one), AT_FDCWD, os.fsencode(other), RENAME_EXCHANGE)
    return done == 0
