"""Where a run's cells go: one run folder per version point.

An ordinary run has one outlet. Version points that write with the same Hudi release and run
the same Hive and Trino, and differ only in the Hudi jars a reader carries (version skew:
`hive_hudi`, `spark_hudi`), share one run: the tables are written once, every distinct
reader (engine × Hudi release) is started once and reads each table once, and each point's
cells go to a run folder of its own, as if the point had run alone. A reader that two points
have in common (Trino, say) reads a table once and its cells go to both folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engines import engine_class
from engines.base import Engine
from harness.results.expectations import Known
from harness.results.store import ResultsWriter
from harness.run.fleet import EngineSpec, EngineState
from harness.run.options import RunOptions, RunResult


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
        "hudi_version",
        "expectations_dir",
        "engine_settings",
        "reverse_order",
    )
    differing = [name for name in same if getattr(first, name) != getattr(other, name)]
    if differing:
        raise ValueError(f"points that share a run must agree on {', '.join(differing)}")
    if first.resume_dir or other.resume_dir or first.rerun_pattern or other.rerun_pattern:
        raise ValueError("a shared run cannot resume or re-run; resume each point's run alone")


def plan_engines(
    points: list[RunOptions], writer_hudi: str
) -> tuple[list[EngineSpec], list[list[int]]]:
    """The distinct readers of the points (engine × the Hudi release it reads with), in the
    engine order of the run, and for every point the indexes of its readers among them.

    A reader whose release is the writer's is the engine as an ordinary run has it; a second
    instance of an engine gets a label of its own (`hive-hudi-0.15.0`) for its logs.
    """
    specs: list[EngineSpec] = []
    found: dict[tuple[str, str | None], int] = {}
    routes: list[list[int]] = [[] for _ in points]
    for name in points[0].engines:
        cls: type[Engine] = engine_class(name)
        releases: list[str | None] = []
        for options in points:
            release = options.reader_hudi(name)
            releases.append(None if release == writer_hudi else release)
        distinct = list(dict.fromkeys(releases))
        for release in distinct:
            label = name if release is None or len(distinct) == 1 else f"{name}-hudi-{release}"
            found[(name, release)] = len(specs)
            specs.append(EngineSpec(cls, release, label))
        for route, release in zip(routes, releases, strict=True):
            route.append(found[(name, release)])
    return specs, routes
