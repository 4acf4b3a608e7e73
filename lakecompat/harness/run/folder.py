"""The run folder: a new one per run, what it records about the run (`run.json`), what a
completed run deletes, and how an interrupted run is taken up again (`--resume`)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lakecompat.engines import (
    carried_field,
    carried_releases,
    carriers,
    engine_class,
    known_engines,
)
from lakecompat.engines.attached import Attachments
from lakecompat.engines.context import SHARED_SCRATCH_FOLDERS, SHARED_STATE_FOLDERS
from lakecompat.engines.formats import FORMATS, ORIGINAL
from lakecompat.engines.releases import Releases
from lakecompat.harness.results.expectations import Known, to_records
from lakecompat.harness.results.hints import invocation
from lakecompat.harness.results.store import RUN_FILE, ResultsError, load_run, write_run_info
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.plan import select_scenarios
from lakecompat.harness.scenario.model import Scenario

#: What a completed run deletes beyond each engine's scratch: a `--rerun`'s cells.
RERUN_FOLDER = "rerun"
#: `record_ending`'s `failure` for a run stopped by Ctrl-C or SIGTERM.
INTERRUPTED = "interrupted"
#: Free space a run needs where it writes (tables, logs and the engines' scratch data).
MIN_FREE_BYTES = 2 * 1024**3


def check_free_disk(folder: Path, needed: int = MIN_FREE_BYTES) -> None:
    """Refuse to start where the disk is nearly full (a run would fail halfway)."""
    existing = folder.resolve()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if free < needed:
        raise ValueError(
            f"{existing}: only {free / 1024**3:.1f} GiB free; a run needs at least "
            f"{needed / 1024**3:.0f} GiB for its tables, logs and the engines' scratch data "
            "(free some space, or write the run elsewhere with --reports)"
        )


def new_run_dir(reports_dir: Path) -> Path:
    """A new folder `runs/<UTC time>` below `reports_dir` (absolute: Hudi resolves table paths
    as URIs)."""
    runs = reports_dir.resolve() / "runs"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    run_dir = runs / stamp
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = runs / f"{stamp}-{suffix}"
    run_dir.mkdir(parents=True)
    return run_dir


def prepare_resume(run_dir: Path) -> Path:
    """Clear the services' state of an interrupted run; its finished cells stay."""
    clear_service_state(run_dir)
    return run_dir


def clear_service_state(run_dir: Path) -> None:
    """Delete every folder of the run folder that holds a service's state (the shared
    services', and each engine's `state_folders`); logs and results stay."""
    for state in _folders("state_folders", SHARED_STATE_FOLDERS):
        for path in run_dir.glob(state):
            shutil.rmtree(path, ignore_errors=True)


def clean(run_dir: Path, keep_tables: bool) -> None:
    """Delete what only the engines needed (and the tables, unless kept)."""
    scratch = _folders("scratch_folders", (*SHARED_SCRATCH_FOLDERS, RERUN_FOLDER))
    for name in [*scratch, *(() if keep_tables else ("tables",))]:
        for path in run_dir.glob(name):
            shutil.rmtree(path, ignore_errors=True)


def _folders(kind: str, shared: tuple[str, ...]) -> list[str]:
    """The shared services' folders of a kind, then every registered engine's (its class's
    `state_folders` or `scratch_folders`), each once."""
    found = dict.fromkeys(shared)
    for name in known_engines():
        found.update(dict.fromkeys(getattr(engine_class(name), kind)))
    return list(found)


def run_info(
    run_dir: Path,
    options: RunOptions,
    writer: dict[str, str],
    engines: dict[str, str],
    scenarios: list[Scenario],
    known: list[Known],
) -> dict[str, object]:
    """What `run.json` records: versions, the engines' order, the plan and the known outcomes
    (a resumed run keeps its start time and lists when it was resumed)."""
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    info: dict[str, object] = {
        "run_id": run_dir.name,
        "started": now,
        "status": "running",
        "writer": writer,
        "engines": engines,
        "engine_order": list(engines),
        "scenarios": [s.id for s in scenarios],
        "formats": list(options.formats),
        "table_types": list(options.table_types),
        "shapes": list(options.shapes),
        "variants": options.variants,
        "pattern": options.pattern,
        "engine_settings": options.engine_settings,
        "unchecked_settings": options.unchecked_settings,
        "table_cache": str(options.table_cache) if options.table_cache else None,
        "containers": options.containers,
        **({"images": options.images} if options.images else {}),
        **{
            carried_field(name, table_format): options.releases.carried_by(name).get(table_format)
            for name, table_format in carriers()
        },
        "known": options.known_records or to_records(known, options.expectations_dir or Path()),
        # What the commands its reports name (`--resume`, `repro`) are made of.
        "invocation": invocation(run_dir, options.reports_dir),
    }
    if options.resume_dir is not None:
        before, _ = load_run(run_dir)
        info["started"] = before.get("started", now)
        info["resumed"] = [*before.get("resumed", []), now]
    return info


def record_ending(run_dir: Path, failure: str) -> None:
    """Record in `run.json` how the run ended: `status` complete (`failure` ""), interrupted
    (`INTERRUPTED`) or failed, with the `error`. A run that failed before its engines started
    has no `run.json` yet; it gets one that says so, so that its folder never reads as a run."""
    info = run_record(run_dir)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    info.setdefault("run_id", run_dir.name)
    info.pop("error", None)
    if not failure:
        info.update(status="complete", finished=now)
    elif failure == INTERRUPTED:
        info.update(status="interrupted", stopped=now)
    else:
        info.update(status="failed", stopped=now, error=failure)
    write_run_info(run_dir, info)


def run_record(run_dir: Path) -> dict[str, object]:
    """The run's `run.json` ({} where there is none)."""
    path = run_dir / RUN_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def run_attachments(info: dict[str, Any]) -> tuple[Attachments, str | None]:
    """The services the run in `info` (its `run.json`) attached to, and the name it gave its
    tables there (None: it started its own)."""
    attached = dict(info.get("attached") or {})
    name = attached.pop("name", None)
    for derived in ("database", "tables"):
        attached.pop(derived, None)
    return Attachments.from_record(attached), name


def resume_options(run_dir: Path, scenarios_dir: Path, reports_dir: Path) -> RunOptions:
    """The options of the interrupted run in `run_dir`, to complete it with `Runner`."""
    info, _ = load_run(run_dir)
    if "writer" not in info:  # no run.json, or one that says the run could not start
        why = f" ({info['error']})" if info.get("error") else ""
        raise ResultsError(
            f"{run_dir}: the run stopped before its engines had started{why}, "
            "so there is nothing to resume: start a new run"
        )
    attachments, name = run_attachments(info)
    options = RunOptions(
        attachments=attachments,
        attached_name=name,
        scenarios_dir=scenarios_dir,
        pattern=info.get("pattern"),
        engines=tuple(info.get("engine_order") or info["engines"]),
        # A run from before other table formats wrote Hudi only.
        formats=tuple(info.get("formats") or (ORIGINAL,)),
        table_types=tuple(info["table_types"]),
        # A run from before query shapes read `SELECT *` only.
        shapes=tuple(info.get("shapes") or ("all",)),
        variants=info.get("variants") or "all",
        reports_dir=reports_dir,
        # The cells still to read come from the releases the run started with, whatever
        # this shell's environment names.
        releases=recorded_releases(info),
        versions=_version_options(info),
        engine_settings=info.get("engine_settings") or {},
        unchecked_settings=info.get("unchecked_settings") or {},
        resume_dir=run_dir.resolve(),
        known_records=info.get("known") or [],
        shard_record=info.get("shard"),
        # A run started with --no-table-cache is completed without it too.
        table_cache=Path(info["table_cache"]) if info.get("table_cache") else None,
        # A run started with --containers is completed in containers too.
        containers=bool(info.get("containers")),
        images=dict(info.get("images") or {}),
    )
    chosen = [s.id for s in select_scenarios(options)]
    if chosen != info["scenarios"]:
        missing = sorted(set(info["scenarios"]) - set(chosen))
        added = sorted(set(chosen) - set(info["scenarios"]))
        raise ResultsError(
            f"{run_dir}: the scenario files changed since this run started "
            f"(missing: {', '.join(missing) or 'none'}; new: {', '.join(added) or 'none'}); "
            "resuming would not give the run's matrix: start a new run"
        )
    return options


def _version_options(info: Mapping[str, Any]) -> dict[str, str]:
    """Each format's version option (`table_version`, ...) as the run's writers recorded it,
    by format (a run from before `writers` recorded the first format's writer in `writer`)."""
    writers = dict(info.get("writers") or {})
    found: dict[str, str] = {}
    for table_format in FORMATS.values():
        record = writers.get(table_format.name)
        if record is None and table_format.name == ORIGINAL:
            record = info.get("writer")
        version = dict(record or {}).get(table_format.version_option)
        if version:
            found[table_format.name] = str(version)
    return found


def recorded_releases(info: Mapping[str, Any]) -> Releases:
    """The releases the run in `info` (its `run.json`) started with: each format's writer
    release, each engine's whose release can be chosen (an engine the run attached to is left
    out: its service says its own), and the format jars an engine carried apart from the
    writer's."""
    attachments, _ = run_attachments(dict(info))
    engines: dict[str, str] = {}
    for name, release in dict(info.get("engines") or {}).items():
        if name not in known_engines() or attachments.attaches(name) or not release:
            continue
        if engine_class(name).release_env:
            engines[name] = str(release)
    writers = dict(info.get("writers") or {})
    formats: dict[str, str] = {}
    for name in FORMATS:
        release = dict(writers.get(name) or {}).get(name)
        if not release and name == ORIGINAL:  # a run from before `writers` recorded it so
            release = dict(info.get("writer") or {}).get(name)
        if release:
            formats[name] = str(release)
    return Releases(formats, engines, carried_releases(info.get))
