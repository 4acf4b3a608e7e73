"""Where a run's cells go: one run folder per version point.

An ordinary run has one outlet. Version points that write with the same Hudi release and run
the same Hive and Trino, and differ only in the Hudi jars a reader carries (version skew:
`hive_hudi`, `spark_hudi`), share one run: the tables are written once, every distinct
reader (engine × Hudi release) is started once and reads each table once, and each point's
cells go to a run folder of its own, as if the point had run alone. A reader that two points
have in common (Trino, say) reads a table once and its cells go to both folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from lakecompat.engines import engine_class
from lakecompat.engines.attached import Attachments
from lakecompat.engines.base import Engine
from lakecompat.harness.results.expectations import Judge, Known
from lakecompat.harness.results.store import ResultsWriter
from lakecompat.harness.run.fleet import EngineSpec, EngineState
from lakecompat.harness.run.options import RunOptions, RunResult


@dataclass
class Outlet:
    """One point's run folder, results file and cells, and the engines whose cells it gets."""

    options: RunOptions
    run_dir: Path
    results: ResultsWriter
    result: RunResult
    known: list[Known]
    #: Indexes into the run's engines, in this point's engine order.
    engine_indexes: list[int] = field(default_factory=list)
    #: Judges the point's cells against its known outcomes as they are measured.
    judge: Judge = field(init=False)

    def __post_init__(self) -> None:
        self.judge = Judge(self.known)

    def engines(self, every: list[EngineState]) -> list[EngineState]:
        """This point's engines among the run's."""
        return [every[i] for i in self.engine_indexes]


def check_shareable(first: RunOptions, other: RunOptions) -> None:
    """Points share a run only when they write and choose the same: else a ValueError."""
    same = (
        "scenarios_dir",
        "pattern",
        "engines",
        "table_types",
        "expectations_dir",
        "engine_settings",
        "reverse_order",
    )
    differing = [name for name in same if getattr(first, name) != getattr(other, name)]
    for part in ("formats", "engines"):  # the releases: only what readers carry may differ
        if getattr(first.releases, part) != getattr(other.releases, part):
            differing.append(f"the releases of the {part}")
    if differing:
        raise ValueError(f"points that share a run must agree on {', '.join(differing)}")
    if first.resume_dir or other.resume_dir or first.rerun_pattern or other.rerun_pattern:
        raise ValueError("a shared run cannot resume or re-run; resume each point's run alone")


def plan_engines(points: list[RunOptions]) -> tuple[list[EngineSpec], list[list[int]]]:
    """The distinct readers of the points (engine × the format releases it carries apart from
    the writer's), in the engine order of the run, and for every point the indexes of its
    readers among them.

    A reader that carries none is the engine as an ordinary run has it; a second instance of
    an engine gets a label of its own (`hive-hudi-0.15.0`) for its logs.
    """
    specs: list[EngineSpec] = []
    found: dict[tuple[str, tuple[tuple[str, str], ...]], int] = {}
    routes: list[list[int]] = [[] for _ in points]
    for name in points[0].engines:
        cls: type[Engine] = engine_class(name)
        carried = [tuple(sorted(o.releases.carried_by(name).items())) for o in points]
        distinct = list(dict.fromkeys(carried))
        for releases in distinct:
            label = name
            if releases and len(distinct) > 1:
                label += "".join(f"-{fmt}-{release}" for fmt, release in releases)
            found[(name, releases)] = len(specs)
            specs.append(EngineSpec(cls, releases, label))
        for route, releases in zip(routes, carried, strict=True):
            route.append(found[(name, releases)])
    return specs, routes


#: Tables a run reads from which an engine with lanes reads in them (the default matrix reads
#: 192). Another HiveServer2 costs some 15 CPU-seconds to start and warm up; each table it
#: reads half the variants of saves about a second of the readers' wall time.
LANES_FROM_TABLES = 40


def plan_lanes(
    specs: list[EngineSpec],
    routes: list[list[int]],
    lanes: bool,
    attachments: Attachments,
) -> tuple[list[EngineSpec], list[list[int]]]:
    """The engines with those that have lanes (`Engine.lanes`) split into an instance per
    lane, each reading a share of the variants, and the points' routes to them.

    An engine's lanes sit next to each other in the run's order, the first under the
    engine's own label; a further lane's label adds `-lane<N>` (its logs and folder). An
    engine the run attaches to keeps one instance: lakecompat starts no second one of it.
    An engine that would share the writer's process reads in one of its own
    (`Engine.apart_in_lanes`), unless it runs on an attached cluster.
    """
    if not lanes:
        return specs, routes
    planned: list[EngineSpec] = []
    moved: dict[int, list[int]] = {}
    for index, spec in enumerate(specs):
        if spec.cls.apart_in_lanes and not attachments.attaches(spec.cls.name):
            spec = replace(spec, apart=True)
        names = list(spec.variants or spec.cls.variant_names())
        count = min(spec.cls.lanes, len(names))
        if count < 2 or attachments.attaches(spec.cls.name):
            moved[index] = [len(planned)]
            planned.append(spec)
            continue
        label = spec.label or spec.cls.name
        share = -(-len(names) // count)  # variants per lane, rounded up
        moved[index] = []
        for lane in range(count):
            chosen = tuple(names[lane * share : (lane + 1) * share])
            if not chosen:
                break
            moved[index].append(len(planned))
            planned.append(
                replace(
                    spec,
                    label=label if lane == 0 else f"{label}-lane{lane + 1}",
                    variants=chosen,
                    lane_of=None if lane == 0 else label,
                )
            )
    return planned, [[new for old in route for new in moved[old]] for route in routes]
