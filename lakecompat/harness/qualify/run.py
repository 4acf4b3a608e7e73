"""`lakecompat qualify`: run the matrix at each version point, then compare two of them.

Each point is an ordinary run folder in `<reports>/points/<point>/runs/<id>/` (with a
`latest/` when it ran the default matrix), so any point can be re-rendered, resumed or diffed.
Points that write with the same releases share one run (`share_groups`): the tables are
written once and each distinct reader reads them once; otherwise the engines are started
afresh for each point. The qualification files go to `<reports>/qualify/`.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from lakecompat.engines import engine_class
from lakecompat.engines.formats import FORMATS, ORIGINAL, format_named
from lakecompat.engines.infra.artifacts import ProvisioningError, fetch
from lakecompat.harness.qualify.compare import Point, Qualification, qualify
from lakecompat.harness.qualify.record import QualificationInterrupted, Record
from lakecompat.harness.qualify.versions import (
    RELEASED,
    VersionPlan,
    VersionPoint,
    point_releases,
    point_versions,
    slug,
)
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import ResultsError, load_cells, unfinished
from lakecompat.harness.run.folder import resume_options
from lakecompat.harness.run.interrupt import RunInterrupted
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.plan import format_tables, planned_cells, select_scenarios
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.releases import check_releases
from lakecompat.harness.run.resume import resume
from lakecompat.harness.run.runner import Runner


def point_options(options: RunOptions, point: VersionPoint) -> RunOptions:
    """The run options of one point: its releases over the run's, its writers' version
    options, and its own reports folder."""
    return replace(
        options,
        releases=point_releases(point).over(options.releases),
        versions={**options.versions, **point_versions(point)},
        reports_dir=options.reports_dir / "points" / slug(point.name),
    )


@dataclass(frozen=True)
class PointRun:
    """A point's finished run: its folder, and how long the run that measured it took
    (engine starts included; points that shared a run share its time)."""

    run_dir: Path
    seconds: float
    #: The names of the other points measured in the same run (see `share_groups`).
    shared_with: tuple[str, ...] = ()


def share_groups(plan: VersionPlan, options: RunOptions) -> list[list[VersionPoint]]:
    """The points in groups that can share one run, in the plan's order of first appearance.

    Points share a run when they write with the same Hudi release and table version, the same
    Iceberg release and format version, and run the same releases of the readers that have
    one: they differ at most in the Hudi jars a reader carries (`hive_hudi`, `spark_hudi`), so
    their tables are the same, written once, and each reader reads them once.
    """
    groups: dict[tuple[str, ...], list[VersionPoint]] = {}
    for point in plan.points:
        chosen = point_options(options, point)
        releases = chosen.releases
        writers = tuple(releases.format(name) for name in FORMATS)
        versions = tuple(chosen.version(f.name) or f.default_version for f in FORMATS.values())
        engines = tuple(releases.engine(cls.name, cls.default_release) for cls in RELEASED.values())
        groups.setdefault((*writers, *versions, *engines), []).append(point)
    return list(groups.values())


def check_points(plan: VersionPlan, options: RunOptions) -> None:
    """Every release of every point exists (`check_releases`, point by point), before
    anything is fetched or started: a release that does not exist, in the last point too,
    stops the qualification within seconds, in one sentence naming the point and the field."""
    for point in plan.points:
        named = {
            field: f"version point {point.name}: {field} {release}"
            for field, release in point.releases().items()
        }
        check_releases(point_options(options, point), named)


def plan_line(plan: VersionPlan, options: RunOptions) -> str:
    """What the qualification will run, said before it starts: points, runs, tables and cells
    (a point's), engines and formats."""
    runs = len(share_groups(plan, options))
    tables = list(format_tables(select_scenarios(options), options.table_types, options.formats))
    engines = [engine_class(name) for name in options.engines]
    cells = sum(planned_cells([(s, t)], engines, options.shapes, f) for s, t, f in tables)
    return (
        f"qualifying {len(plan.points)} version points in {runs} run(s): {len(tables)} tables "
        f"and {cells:,} cells a point, read by {', '.join(options.engines)} "
        f"({' and '.join(options.formats)} tables)"
    )


def qualify_points(record: Record, quiet: bool) -> dict[str, PointRun]:
    """Measure every point of the qualification `record` holds that is not measured yet, each
    point's run folder recorded the moment it exists; a stop signal raises
    `QualificationInterrupted`, whose message completes the qualification."""
    record.mark("running")
    try:
        runs = run_points(record.plan, record.options, quiet, record)
    except KeyboardInterrupt as stop:
        record.mark("interrupted")
        done = [p.name for p in record.plan.points if record.run_status(p.name) == "complete"]
        stopped = stop if isinstance(stop, RunInterrupted) else None
        raise QualificationInterrupted(record.folder, stopped, done) from None
    except BaseException:
        record.mark("failed")
        raise
    return runs


def run_points(
    plan: VersionPlan, options: RunOptions, quiet: bool, record: Record | None = None
) -> dict[str, PointRun]:
    """Run the matrix at every point of the plan, each group of points that can share a run
    (`share_groups`) in one run; each point's run by name. With the `record` of an interrupted
    qualification, a point whose run is complete is kept and one whose run was interrupted is
    completed (`lakecompat run --resume`, each point alone)."""
    status = {p.name: record.run_status(p.name) if record else "not started" for p in plan.points}
    pending = [p for p in plan.points if status[p.name] != "complete"]
    provision_points(plan, options, quiet, pending)
    runs: dict[str, PointRun] = {}
    groups = share_groups(plan, options)
    for number, group in enumerate(groups, start=1):
        if not quiet:
            described = "; ".join(
                f"{p.name} ({p.describe()}{_status_note(status[p.name])})" for p in group
            )
            together = ", sharing the written tables" if len(group) > 1 else ""
            print(f"run {number}/{len(groups)}: {described}{together}")
        started = time.monotonic()
        if all(status[p.name] == "not started" for p in group):
            run_dirs = _run_group(group, options, quiet, record)
        else:
            run_dirs = [_complete_point(p, options, quiet, record, status[p.name]) for p in group]
        seconds = time.monotonic() - started
        names = tuple(point.name for point in group)
        for point, run_dir in zip(group, run_dirs, strict=True):
            others_names = tuple(name for name in names if name != point.name)
            runs[point.name] = PointRun(run_dir, seconds, others_names)
    return runs


def _status_note(status: str) -> str:
    """`, interrupted: completing its run` and the like, for a point measured before."""
    if status == "not started":
        return ""
    if status == "complete":
        return ", measured already"
    return f", {status}: completing its run"


def _run_group(
    group: list[VersionPoint], options: RunOptions, quiet: bool, record: Record | None
) -> list[Path]:
    """Run the points of `group` in one run; their run folders, recorded the moment the run
    has made them."""
    first, *others = [point_options(options, point) for point in group]
    names = [point.name for point in group]

    def note(run_dirs: list[Path]) -> None:
        if record is not None:
            record.note_runs(names, run_dirs)

    runner = Runner(first, Progress(quiet=quiet), sharing=others, on_folders=note)
    return [result.run_dir for result in runner.run_all()]


def _complete_point(
    point: VersionPoint, options: RunOptions, quiet: bool, record: Record | None, status: str
) -> Path:
    """The run folder of one point of an interrupted qualification: kept when its run is
    complete, completed when it was interrupted or failed, run afresh when it never started."""
    assert record is not None  # only an interrupted qualification has points measured before
    if status == "not started":
        return _run_group([point], options, quiet, record)[0]
    run_dir = record.runs[point.name]
    if status != "complete":
        resumed = resume_options(
            run_dir, options.scenarios_dir, point_options(options, point).reports_dir
        )
        resume(resumed, Progress(quiet=quiet))
    return run_dir


def provision_points(
    plan: VersionPlan,
    options: RunOptions,
    quiet: bool,
    points: list[VersionPoint] | None = None,
) -> None:
    """Fetch what the `points` (default: every point) need before the first one runs, so a
    release that cannot be provisioned here stops the qualification at once
    (`ProvisioningError`), not halfway: the writers' jars of each format written (the first
    format's too: Spark's session loads it), then what each engine's `provision` fetches at
    the point's releases. Whether each release exists is asked before, for every point
    (`check_points`)."""
    for point in plan.points if points is None else points:
        if not quiet:
            print(f"provisioning version point {point.name}")
        releases = point_options(options, point).releases
        try:
            for name in dict.fromkeys((ORIGINAL, *options.formats)):
                artifact = format_named(name).release_artifact
                if artifact is not None:
                    fetch(artifact(releases.format(name)))
            for name in options.engines:
                engine_class(name).provision(releases)
        except ProvisioningError as exc:
            raise ProvisioningError(
                f"version point {point.name} ({point.describe()}) cannot be provisioned here, "
                f"so no point was run: {exc}"
            ) from None


def selected(
    pattern: str | None,
    engines: tuple[str, ...],
    table_types: tuple[str, ...],
    formats: tuple[str, ...] | None = None,
) -> Callable[[Cell], bool]:
    """Whether a finished run's cell is among those `--scenarios`, `--engines`,
    `--table-types` and `--formats` select (as they select the cells of a run; `formats`
    None: every format)."""
    globs = [g.strip() for g in (pattern or "").split(",") if g.strip()]

    def keep(cell: Cell) -> bool:
        return (
            cell.engine in engines
            and (formats is None or cell.format in formats)
            and cell.table_type in table_types
            and (not globs or any(fnmatch.fnmatchcase(cell.scenario, g) for g in globs))
        )

    return keep


def compare_runs(
    baseline: Path,
    candidate: Path,
    names: tuple[str, str] | None = None,
    keep: Callable[[Cell], bool] | None = None,
) -> Qualification:
    """The qualification of two run folders (or results.json files), of the cells `keep`
    selects (default: all); names default to the run ids."""
    base_info, base_cells = load_cells(baseline)
    cand_info, cand_cells = load_cells(candidate)
    for path, info, cells in (
        (baseline, base_info, base_cells),
        (candidate, cand_info, cand_cells),
    ):
        # A part of a run lacks cells, which would read as broken or as run on one side only.
        if problem := unfinished(path, info, cells):
            raise ResultsError(f"qualify compares finished runs only: {problem}")
    if keep is not None:
        base_cells = [c for c in base_cells if keep(c)]
        cand_cells = [c for c in cand_cells if keep(c)]
    base_name, cand_name = names or (
        str(base_info.get("run_id") or baseline.name),
        str(cand_info.get("run_id") or candidate.name),
    )
    return qualify(
        Point.of_run(base_name, base_info, base_cells),
        base_cells,
        Point.of_run(cand_name, cand_info, cand_cells),
        cand_cells,
    )
