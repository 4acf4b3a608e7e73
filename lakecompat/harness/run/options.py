"""What a run is asked to do (`RunOptions`) and what it gives back (`RunResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakecompat.engines import UnknownEngineError, engine_class
from lakecompat.engines.attached import Attachments
from lakecompat.engines.formats import format_named
from lakecompat.engines.releases import Releases
from lakecompat.harness.results.expectations import Judged
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.run.shards import Shard
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES
from lakecompat.harness.writer.cache import default_location

if TYPE_CHECKING:
    from lakecompat.harness.run.latest import Published

DEFAULT_ENGINES = ("spark", "hive", "trino", "hudi-rs", "daft")
#: The table formats a run writes unless `--formats` says otherwise (those of them that one
#: of the run's engines reads: `default_formats`).
DEFAULT_FORMATS = ("hudi", "iceberg", "delta")
#: The engines each table format is read with unless `--engines` names others.
DEFAULT_READERS = {
    "hudi": DEFAULT_ENGINES,
    "iceberg": ("spark", "trino", "pyiceberg", "daft", "polars"),
    "delta": ("spark", "deltalake", "polars", "daft", "duckdb"),
}


def readers_words() -> str:
    """Each format's default readers, for help: `spark,hive for Hudi tables, spark,trino for
    Iceberg tables, ...`."""
    return ", ".join(
        f"{','.join(readers)} for {format_named(name).title} tables"
        for name, readers in DEFAULT_READERS.items()
    )


def default_engines(formats: tuple[str, ...]) -> tuple[str, ...]:
    """The engines a run of `formats` reads with when `--engines` names none, in order."""
    return tuple(dict.fromkeys(name for f in formats for name in DEFAULT_READERS[f]))


def default_formats(engines: tuple[str, ...] | None, attached: bool = False) -> tuple[str, ...]:
    """The formats a run writes when `--formats` names none: Hudi's alone for a run `attached`
    to engines a user runs (their catalogs know no other format yet), else the default
    formats that one of `engines` reads (None: every default format)."""
    if attached:
        return tuple(f for f in DEFAULT_FORMATS if format_named(f).attachable)
    if engines is None:
        return DEFAULT_FORMATS

    def reads(name: str, table_format: str) -> bool:
        try:
            return engine_class(name).reads_format(table_format)
        except UnknownEngineError:  # refused with the known names before the run starts
            return False

    chosen = tuple(f for f in DEFAULT_FORMATS if any(reads(n, f) for n in engines))
    return chosen or DEFAULT_FORMATS


@dataclass
class RunOptions:
    """What to run; the defaults are the default matrix."""

    scenarios_dir: Path = Path("scenarios")
    pattern: str | None = None
    engines: tuple[str, ...] = default_engines(DEFAULT_FORMATS)
    #: The table formats written (`harness.writer.FORMATS`), each scenario once per format
    #: that has its steps; each format's tables are read by the engines that read it. Left
    #: out (None): the default formats that one of `engines` reads (`default_formats`).
    formats: tuple[str, ...] = None  # type: ignore[assignment]  # set in __post_init__
    table_types: tuple[str, ...] = ("cow", "mor")
    #: The query shapes to read (`harness.scenario.shapes`): `all` is `SELECT *` with every
    #: query type and variant; the others read the snapshot under each engine's default.
    shapes: tuple[str, ...] = DEFAULT_SHAPES
    #: `all`: `SELECT *` under every variant of each engine; `default`: under each engine's
    #: default variant only (`harness.run.reads.VARIANT_CHOICES`).
    variants: str = "all"
    reports_dir: Path = Path("reports")
    #: The releases the run writes and reads with (`engines.releases`), chosen before it
    #: starts from its options, the environment, a version point or a resumed run's record:
    #: each format's writer release, each engine's, and the format jars an engine carries
    #: apart from the writer's (version skew). What it leaves out is its default.
    releases: Releases = field(default_factory=Releases)
    #: Each format's version option as the run chose it, by format name (`TableFormat.
    #: version_option`: Hudi's table version, `{"hudi": "6"}`, which Hudi 0.14/0.15 readers
    #: read; Iceberg's format version, 2 or 3); a format left out: its writer's own.
    versions: dict[str, str] = field(default_factory=dict)
    #: Folder of known-outcome files (expectations/*.yaml); None: every cell is expected to PASS.
    expectations_dir: Path | None = None
    #: Extra reader settings per engine, applied to every variant (they win over the variant's).
    engine_settings: dict[str, dict[str, str]] = field(default_factory=dict)
    #: The keys of `engine_settings` each engine takes unchecked (only the running engine
    #: knows them), each with why (`harness.run.settings.check_settings`).
    unchecked_settings: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Seconds a query may take before the engine is killed and restarted (0: no limit).
    query_timeout: float = 300
    #: Seconds a writer step may take before Spark is killed and restarted (0: no limit).
    step_timeout: float = 900
    #: Keep the Hudi tables after a completed run (they are deleted with the engines' scratch).
    keep_tables: bool = False
    #: An interrupted run's folder to complete (see `resume_options`), instead of a new run.
    resume_dir: Path | None = None
    #: Known outcomes as recorded in a run folder; when set, `expectations_dir` is not read.
    known_records: list[dict[str, Any]] | None = None
    #: Stop and start every engine (Spark and the Metastore too) before each scenario, the way
    #: container-based suites isolate tests; only the benchmark uses it, for comparison.
    isolate_scenarios: bool = False
    #: After the matrix, write and read the scenarios matching this glob once more against
    #: the engines still running, without recording them (the benchmark times it).
    rerun_pattern: str | None = None
    #: Run the chosen scenarios in reverse order (baselines still first); the order test uses
    #: it to show that no cell depends on what an engine read before.
    reverse_order: bool = False
    #: Run only this shard's share of the tables (baselines always run); None: every table.
    shard: Shard | None = None
    #: A cost file (or run folder) to balance the shards by; None: estimated costs.
    shard_costs: Path | None = None
    #: The shard as a run recorded it in `run.json` (a resumed shard keeps its share).
    shard_record: dict[str, Any] | None = None
    #: Engines and services the run attaches to instead of starting them (`--spark-master`,
    #: `--trino`, `--hiveserver2`, `--metastore`, `--warehouse`).
    attachments: Attachments = field(default_factory=Attachments)
    #: The name a resumed run gave its database and table folder on attached services.
    attached_name: str | None = None
    #: The table cache's folder (`harness.writer.cache`): tables written before with the same
    #: key are copied from there instead of written again. None: every table is written.
    table_cache: Path | None = field(default_factory=default_location)
    #: Whether an engine with lanes (`Engine.lanes`: HiveServer2) reads a table's variants
    #: in several instances at once. None: when the run reads at least `LANES_FROM_TABLES`
    #: tables, where the time saved outweighs starting another instance.
    lanes: bool | None = None
    #: Start the engines in containers built here (`engines.infra.containers`) instead of as
    #: local processes.
    containers: bool = False
    #: With `containers`: engine (or `metastore`) → a user's image its services run in, with
    #: that image's own `java` (`--image`), instead of the image built here.
    images: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.formats is None:
            self.formats = default_formats(self.engines, self.attachments.any)

    def version(self, table_format: str) -> str | None:
        """The version of `table_format`'s tables the run asked for (None: the writer's own)."""
        return self.versions.get(table_format) or None


@dataclass
class RunResult:
    """A run's folder and cells, with the figures the benchmark reads."""

    run_dir: Path
    cells: list[Cell] = field(default_factory=list)
    #: Every cell with its verdict against the known outcomes (set when the reports are written).
    judged: list[Judged] = field(default_factory=list)
    #: Seconds of every successful writer step (seed rows included), for benchmarks.
    write_seconds: list[float] = field(default_factory=list)
    #: Seconds the re-run of `RunOptions.rerun_pattern` took, engines warm (None: not asked).
    rerun_seconds: float | None = None
    #: The cells of that re-run (they are not part of the run's results).
    rerun_cells: list[Cell] = field(default_factory=list)
    #: Whether the run became `<reports>/latest/`, and why not (None: it did not complete).
    latest: Published | None = None
