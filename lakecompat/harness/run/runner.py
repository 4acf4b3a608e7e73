"""One run: write every table, read it with every engine, record every cell as it is known.

The parts a run is made of have modules of their own: `run_options` (what to run),
`run_plan` (scenarios, tables, a shard's share, known outcomes), `run_folder` (the folder,
`run.json`, resume and clean-up), `fleet` (the engines: start, control check, registration,
restart), `cells` (one cell: query, judge, baseline note) and `outlets` (the run folder of
each version point when several share the run). This module schedules them: the writer and
Spark on one thread, the other engines one table behind on threads of their own.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import replace
from functools import partial
from pathlib import Path

from lakecompat.engines import engine_class, image_services
from lakecompat.engines.attached import DEFAULT_DATABASE, check_reachable, database_name, run_name
from lakecompat.engines.base import Engine
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import describe_error
from lakecompat.engines.formats import ORIGINAL, format_named
from lakecompat.engines.infra.artifacts import cache_dir
from lakecompat.engines.infra.containers.runtime import (
    CONTAINERS_ENV,
    IMAGES_ENV,
    RUN_ENV,
    check_image,
    owner_id,
)
from lakecompat.engines.infra.containers.service import ready_runtime
from lakecompat.engines.infra.containers.service import share as share_with_containers
from lakecompat.engines.infra.containers.spark_submit import spark_home
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.harness.report.render import write_reports
from lakecompat.harness.results.outcomes import Cell, table_kind
from lakecompat.harness.results.store import (
    ResultsWriter,
    count_cells,
    load_run,
    record_event,
    write_run_info,
)
from lakecompat.harness.run import cells, interrupt, latest
from lakecompat.harness.run import folder as run_folder
from lakecompat.harness.run import plan as run_plan
from lakecompat.harness.run.cells import Baselines
from lakecompat.harness.run.fleet import EngineSpec, EngineState, Fleet, Stopped
from lakecompat.harness.run.folder import check_free_disk
from lakecompat.harness.run.options import RunOptions, RunResult
from lakecompat.harness.run.outlets import (
    LANES_FROM_TABLES,
    Outlet,
    check_shareable,
    plan_engines,
    plan_lanes,
)
from lakecompat.harness.run.pipeline import Pipeline
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.reads import PUSHDOWN_SHAPES, Read
from lakecompat.harness.run.settings import check_settings
from lakecompat.harness.run.shards import table_id, write_costs
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.writer import create_writer, writer_class
from lakecompat.harness.writer.base import TableWriter, WriteResult
from lakecompat.harness.writer.cache import prune as prune_table_cache

#: Runs of fewer tables write with Spark's quick JIT compiler alone (`SparkRuntime.quick_jit`):
#: 6 tables took 0.71 of the CPU and 0.87 to 0.95 of the wall time, 30 tables 0.92 of the CPU
#: but 1.07 of the wall time, as the optimising compiler pays back over a longer life.
QUICK_JIT_BELOW_TABLES = 24
#: A cell and the engine instance that measured it (a shared run may have two of an engine).
Measured = tuple[EngineState, Cell]


def tables_folder(context: RunContext, table_format: str) -> Path:
    """Where a format's tables are written: the run's table folder, or a folder of the
    format's own below it (a scenario's tables have the same name in each format)."""
    subfolder = format_named(table_format).tables_subfolder
    return context.tables_dir / subfolder if subfolder else context.tables_dir


class Runner:
    """Runs the matrix of scenarios × table types × engines × query types × variants."""

    def __init__(
        self,
        options: RunOptions,
        progress: Progress | None = None,
        sharing: Sequence[RunOptions] = (),
        on_folders: Callable[[list[Path]], None] | None = None,
    ) -> None:
        """`sharing`: the options of further version points that read the tables this run
        writes (they differ only in the Hudi release a reader carries); each gets a run
        folder of its own (see `harness.outlets`). `on_folders` is told every point's run
        folder the moment the run has made them (a qualification records them)."""
        self.options = options
        self.on_folders = on_folders
        self.points = [options, *sharing]
        for other in sharing:
            check_shareable(options, other)
        self.progress = progress or Progress()
        self.scenarios = run_plan.select_scenarios(options)
        run_plan.check_formats(options)
        self.known = run_plan.load_known(options)
        #: This run's shard (`run.json`'s `shard`), or None for every table.
        self.shard = run_plan.shard_plan(options, self.scenarios)
        #: Seconds each table cost this run (writing, and every cell's query), by table name.
        self.costs: dict[str, float] = {}
        self._cost_lock = threading.Lock()
        for name in options.engines:
            engine_class(name)  # an unknown engine is an error before anything starts
        options.attachments.check(options.engines)
        if options.resume_dir is None:  # a resumed run's settings were checked when it started
            options.unchecked_settings = check_settings(options)
        check_reachable(options.attachments)
        #: What the run created on attached services (`run.json`'s `attached`), if any.
        self._attached_record: dict[str, str] = {}
        # Cells an interrupted run already finished, by key (empty for a new run).
        self._done: dict[tuple[str, ...], Cell] = {}
        if options.resume_dir is not None:
            _, finished = load_run(options.resume_dir)
            self._done = {cell.key: cell for cell in finished}
        # The baseline's outcomes, per engine instance (a shared run may have two Hives).
        self._baselines: dict[str, Baselines] = {}
        # Set when the run stops early; held while a table's cells are recorded.
        self._stopping = threading.Event()
        # Set by Ctrl-C or SIGTERM the moment it arrives: a cell measured after it is not kept.
        self._interrupted = threading.Event()
        self._record_lock = threading.Lock()
        self.fleet = Fleet(self.progress, options.query_timeout, self._stopping)

    def run(self) -> RunResult:
        """Execute the run; every cell is on disk the moment it is known."""
        return self.run_all()[0]

    def run_all(self) -> list[RunResult]:
        """Execute the run; the result of every point, in order (one for an ordinary run)."""
        options = self.options
        check_free_disk(options.resume_dir or options.reports_dir)
        if options.containers:
            start_containers(options.images)
        if options.resume_dir:
            run_dirs = [run_folder.prepare_resume(options.resume_dir)]
        else:
            run_dirs = [run_folder.new_run_dir(point.reports_dir) for point in self.points]
        if self.on_folders is not None:
            self.on_folders(run_dirs)
        outlets = [
            Outlet(
                point,
                run_dir,
                ResultsWriter(run_dir),
                RunResult(run_dir, cells=list(self._done.values())),
                self.known if point is options else run_plan.load_known(point),
            )
            for point, run_dir in zip(self.points, run_dirs, strict=True)
        ]
        home = outlets[0].run_dir
        completed = False
        failure = ""
        context = self._context(home)
        if options.containers:
            share_with_containers(home, context.tables_dir)
        runtime = context.spark
        if options.table_cache is not None:
            prune_table_cache(options.table_cache)  # entries no run used for a month
        tables = sum(1 for f in options.formats for _ in self._tables(f))
        # A small run's writer does not live long enough for the optimising compiler to pay back.
        runtime.quick_jit = tables < QUICK_JIT_BELOW_TABLES
        writers = {
            table_format: create_writer(
                runtime,
                tables_folder(context, table_format),
                options.step_timeout,
                table_format=table_format,
                cache=options.table_cache,
                table_version=options.version(table_format),
                release=options.releases.format(table_format),
            )
            for table_format in options.formats
        }
        writes_in_session = any(
            writer_class(table_format).writes_in_run_session
            and not all(writer.holds(s, kind) for s, kind in self._tables(table_format))
            for table_format, writer in writers.items()
        )
        if not writes_in_session:
            # Spark only reads: every table written in its session comes from the cache.
            runtime.quick_jit = True
        specs, routes = plan_engines(self.points)
        if options.variants == "default":
            specs = [replace(s, variants=s.cls.default_variant_names()) for s in specs]
        lanes = options.lanes
        if lanes is None:
            lanes = tables >= LANES_FROM_TABLES
        specs, routes = plan_lanes(specs, routes, lanes, options.attachments)
        for outlet, route in zip(outlets, routes, strict=True):
            outlet.engine_indexes = route
        stop = interrupt.Stop()
        try:
            with interrupt.watching(self._interrupted, stop):
                self._measure(context, outlets, writers, specs, writes_in_session)
                stop.finished = True
            completed = True
        except KeyboardInterrupt:
            failure = run_folder.INTERRUPTED
        except BaseException as exc:
            failure = describe_error(exc)
            raise
        finally:
            with interrupt.holding():
                self._wind_up(context, outlets, writers, completed, failure)
        if failure == run_folder.INTERRUPTED:
            # Counted in the closed results file: the signal may have come between a cell's
            # line and its place in memory.
            finished = count_cells(outlets[0].run_dir)
            raise interrupt.RunInterrupted(run_dirs, finished, options.reports_dir, stop.cause)
        return [outlet.result for outlet in outlets]

    def _measure(
        self,
        context: RunContext,
        outlets: list[Outlet],
        writers: dict[str, TableWriter],
        specs: list[EngineSpec],
        writes_in_session: bool,
    ) -> None:
        """Start the engines, write and read every table, stop the engines."""
        options = self.options
        first = writers[options.formats[0]]
        # Where every Hudi table comes from the cache, the writer's Spark is not started
        # beside the engines: a run that reads with others never starts it.
        with self.fleet.running(
            context, specs, options.engine_settings, warm_writer=writes_in_session
        ) as engines:
            for outlet in outlets:
                self._write_run_info(outlet, outlets, writers, engines)
            self.fleet.control_checks(first, engines)
            for table_format, writer in writers.items():
                by_id = {s.id: s for s, _ in self._tables(table_format)}
                writer.prepare(list(by_id.values()))
            planned = sum(
                run_plan.planned_cells(
                    self._tables(f), [s.engine for s in engines], options.shapes, f
                )
                for f in options.formats
            )
            self.progress.begin(planned - len(self._done))
            for table_format, writer in writers.items():
                tables = self._tables(table_format)
                self._run_tables(tables, context, writer, engines, outlets, table_format)
            if options.rerun_pattern:
                result = outlets[0].result
                result.rerun_seconds, result.rerun_cells = self._rerun(context, first, engines)
            # Stopping the engines and writing a large run's reports take a minute or two.
            self.progress.stage("every cell read: stopping the engines")

    def _wind_up(
        self,
        context: RunContext,
        outlets: list[Outlet],
        writers: dict[str, TableWriter],
        completed: bool,
        failure: str,
    ) -> None:
        """However the run ended: close its files and services, record how it ended, render
        each point's reports into its run folder, and make a completed default matrix
        `latest/` (`harness.run.latest`)."""
        options = self.options
        if not completed:
            self.progress.end()
            self.progress.note("stopping the engines; the finished cells are kept")
        for outlet in outlets:
            outlet.results.close()
            write_costs(outlet.run_dir, self.costs)
        for writer in writers.values():
            writer.close()
        if completed and not options.keep_tables:
            context.remove_database()
        context.close()
        self.progress.end()
        if any(outlet.result.cells for outlet in outlets):
            self.progress.note("writing the reports")
        if completed and not options.keep_tables and options.attachments.warehouse:
            shutil.rmtree(context.tables_dir, ignore_errors=True)
        for outlet in outlets:
            run_folder.record_ending(outlet.run_dir, failure)
            if completed:
                run_folder.clean(outlet.run_dir, options.keep_tables)
            info = run_folder.run_record(outlet.run_dir)
            # A run that can be resumed gets reports, with no cell yet: they say how.
            if outlet.result.cells or "writer" in info:
                outlet.result.judged = write_reports(outlet.run_dir, [outlet.run_dir])
            if completed:
                outlet.result.latest = latest.publish(
                    outlet.run_dir, outlet.options.reports_dir, info, options.scenarios_dir
                )
        interrupt.restore_logging()

    def _context(self, home: Path) -> RunContext:
        """What the run's engines share; on attached services, a database and a table folder
        named after the run (`attached` in `run.json` records them)."""
        options = self.options
        attached = options.attachments
        runtime = SparkRuntime(
            home / "logs", master=attached.spark_master, releases=options.releases
        )
        # Filters are also read with pushdown off (`reads.PUSHDOWN_SHAPES`).
        pushdown_off = any(shape in PUSHDOWN_SHAPES for shape in options.shapes)
        if not attached.any:
            return RunContext(
                home,
                runtime,
                formats=options.formats,
                releases=options.releases,
                pushdown_off=pushdown_off,
            )
        name = options.attached_name or run_name(home.name)
        database = database_name(name) if attached.catalog_shared else DEFAULT_DATABASE
        tables = attached.warehouse / name if attached.warehouse else home / "tables"
        self._attached_record = {
            **attached.record(),
            "name": name,
            "database": database,
            "tables": str(tables),
        }
        return RunContext(
            home,
            runtime,
            attached,
            database,
            tables,
            formats=options.formats,
            releases=options.releases,
            pushdown_off=pushdown_off,
        )

    def _write_run_info(
        self,
        outlet: Outlet,
        outlets: list[Outlet],
        writers: dict[str, TableWriter],
        engines: list[EngineState],
    ) -> None:
        """The point's `run.json`; in a shared run it names the other points' folders (the
        first point's folder holds the engines' logs). `writer` is the first format's
        writer, `writers` every format's."""
        mine = outlet.engines(engines)
        formats = outlet.options.formats
        versions = {
            s.engine.name: reading_versions(s.engine, formats) if not s.failure else "?"
            for s in mine
        }
        first = next(iter(writers.values()))
        info = run_folder.run_info(
            outlet.run_dir, outlet.options, first.versions, versions, self.scenarios, outlet.known
        )
        if outlet.options.containers:
            info["runs_in"] = {s.engine.name: s.engine.runs_in() for s in mine}
        if list(writers) != [ORIGINAL]:  # a record's `writer` alone: the original's
            info["writers"] = {f: writer.versions for f, writer in writers.items()}
        # A record's first map is of each engine's first format (a record before formats).
        info["default_variants"] = {
            s.engine.name: s.engine.default_variant_name(s.engine.formats[0]) for s in mine
        }
        info["default_variants_by_format"] = {
            f: {
                s.engine.name: s.engine.default_variant_name(f)
                for s in mine
                if s.engine.reads_format(f)
            }
            for f in outlet.options.formats
        }
        if self.shard is not None:
            info["shard"] = self.shard
        if self._attached_record:
            info["attached"] = self._attached_record
        if len(outlets) > 1:
            info["shared_with"] = [str(o.run_dir) for o in outlets if o is not outlet]
            info["logs_in"] = str(outlets[0].run_dir / "logs")
        write_run_info(outlet.run_dir, info)

    def _tables(
        self, table_format: str = "hudi", scenarios: list[Scenario] | None = None
    ) -> Iterator[tuple[Scenario, str]]:
        """The tables of `table_format` this run writes: the scenarios' table types, but
        none of a scenario whose steps the format does not have."""
        chosen = self.scenarios if scenarios is None else scenarios
        planned = (
            (s, t)
            for s, t, _ in run_plan.format_tables(chosen, self.options.table_types, [table_format])
        )
        if self.shard is None:
            return planned
        share = set(self.shard["tables"])
        return (
            (s, t) for s, t in planned if s.spec.baseline or table_id(s, t, table_format) in share
        )

    def _rerun(
        self, context: RunContext, writer: TableWriter, engines: list[EngineState]
    ) -> tuple[float, list[Cell]]:
        """Write and read the scenarios of `rerun_pattern` again: (seconds, cells). The cells
        are not the run's: they go to a folder that is deleted with the scratch data."""
        pattern = self.options.rerun_pattern
        chosen = load_scenarios(self.options.scenarios_dir, pattern)
        if not chosen:
            raise ValueError(f"no scenario matches {pattern!r}")
        folder = context.run_dir / "rerun"
        folder.mkdir(exist_ok=True)
        discarded = Outlet(self.options, folder, ResultsWriter(folder), RunResult(folder), [])
        discarded.engine_indexes = list(range(len(engines)))
        started = time.monotonic()
        costs = dict(self.costs)  # the re-run's tables cost nothing of the run's
        try:
            tables = self._tables(writer.format, chosen)
            self._run_tables(tables, context, writer, engines, [discarded], writer.format)
        finally:
            discarded.results.close()
            self.costs = costs
        return time.monotonic() - started, discarded.result.cells

    def _run_tables(
        self,
        tables: Iterator[tuple[Scenario, str]],
        context: RunContext,
        writer: TableWriter,
        every: list[EngineState],
        outlets: list[Outlet],
        table_format: str = "hudi",
    ) -> None:
        """Write every table (of `table_format`, with its `writer`) and read it with every
        engine that reads the format; each cell goes to the outlets of the points that read
        with its engine.

        Spark reads a table as soon as it is written (it shares the writer's JVM); the other
        engines read it on threads of their own while the writer writes the next table. The
        readers' thread records every cell, a table at a time: Spark's cells first, then the
        other engines' in the run's order, so the results file does not depend on timing.
        """
        engines = [state for state in every if state.engine.reads_format(table_format)]
        inline = [state for state in engines if state.engine.shares_writer]
        beside = [state for state in engines if not state.engine.shares_writer]
        # Up to 4 written tables wait for the readers: reads and writes even out over a run.
        pipeline = Pipeline("lakecompat-readers", depth=4, inline=not beside)
        helpers = ThreadPoolExecutor(max(1, len(beside) - 1), "lakecompat-reader")
        previous: Scenario | None = None
        every_engine = [state.engine for state in engines]
        try:
            for scenario, table_type in tables:
                shapes = self.options.shapes
                if run_plan.table_done(
                    self._done, scenario, table_type, every_engine, shapes, table_format
                ):
                    continue
                if self.options.isolate_scenarios and previous not in (None, scenario):
                    pipeline.drain()
                    self.fleet.restart_everything(context, engines)
                previous = scenario
                kind = table_kind(table_format, table_type)
                cached = writer.holds(scenario, table_type)
                doing = "from the table cache:" if cached else "writing"
                self.progress.stage(f"{doing} {scenario.id} ({kind})")
                if not context.spark.alive():  # Spark died since its last job
                    record_event(context.run_dir, {"event": "restart", "engine": "spark-writer"})
                    context.spark.restart()
                written = writer.write(scenario, table_type)
                outlets[0].result.write_seconds.extend(written.step_seconds)
                cost = sum(written.step_seconds)
                self._add_cost(table_id(scenario, table_type, table_format), cost)
                first: Iterable[Measured] = self._read_everywhere(scenario, written, inline, writer)
                if not pipeline.inline:  # Spark's reads happen here, in the writer's thread
                    first = list(first)
                read_rest = partial(self._read_and_record, scenario, written, beside, writer)
                pipeline.submit(partial(read_rest, first, helpers, every, outlets))
            pipeline.finish()
        except BaseException:
            self._stop_readers(beside, pipeline)
            raise
        finally:
            helpers.shutdown(wait=False, cancel_futures=True)

    def _read_and_record(
        self,
        scenario: Scenario,
        written: WriteResult,
        engines: list[EngineState],
        writer: TableWriter,
        first: Iterable[Measured],
        helpers: ThreadPoolExecutor,
        every: list[EngineState],
        outlets: list[Outlet],
    ) -> None:
        """Record the cells of `first` (read already, or read now when the pipeline is inline),
        then read the table with `engines`.

        The first engine's cells are recorded the moment they are known; the other engines
        read at the same time on helper threads, and their cells are recorded after it.
        """
        # Registration comes first, one engine after the other: Hive's DDL must not drop a
        # table while another engine reads it.
        registered = self.fleet.register_each(engines, written)
        later = [
            helpers.submit(list, self._read_with(scenario, written, state, writer, error))
            for state, error in registered[1:]
        ]
        try:
            now: Iterator[Measured] = iter(())
            if registered:
                state, error = registered[0]
                now = self._read_with(scenario, written, state, writer, error)
            for measured in itertools.chain(first, now):
                self._record(measured, every, outlets)
            for future in later:
                for measured in future.result():
                    self._record(measured, every, outlets)
        finally:
            wait_for(later)

    def _record(self, measured: Measured, every: list[EngineState], outlets: list[Outlet]) -> None:
        """Append a cell to the results file of every point that reads with its engine, and
        report it (nothing once the run stops)."""
        state, cell = measured
        index = next(i for i, known in enumerate(every) if known is state)
        mine = [outlet for outlet in outlets if index in outlet.engine_indexes]
        # Judged as the first point that reads with the engine judges it.
        judged = mine[0].judge(cell) if mine else None
        with self._record_lock:
            if self._stopping.is_set() or self._interrupted.is_set():
                raise Stopped
            self._add_cost(table_id(cell.scenario, cell.table_type, cell.format), cell.seconds)
            for outlet in mine:
                outlet.results.append(cell)
                outlet.result.cells.append(cell)
            self.progress.cell(cell, judged)

    def _add_cost(self, table: str, seconds: float) -> None:
        with self._cost_lock:
            self.costs[table] = self.costs.get(table, 0.0) + seconds

    def _stop_readers(self, engines: list[EngineState], pipeline: Pipeline) -> None:
        """The run stops early: record nothing more, and end a read in progress at once."""
        with self._record_lock:
            self._stopping.set()
        if pipeline.inline:
            return
        self.fleet.kill(engines)
        pipeline.wait_stopped(timeout=60)

    def _read_everywhere(
        self,
        scenario: Scenario,
        written: WriteResult,
        engines: list[EngineState],
        writer: TableWriter,
    ) -> Iterator[Measured]:
        for state in engines:
            register_error = self.fleet.register(state, written)
            yield from self._read_with(scenario, written, state, writer, register_error)

    def _read_with(
        self,
        scenario: Scenario,
        written: WriteResult,
        state: EngineState,
        writer: TableWriter,
        register_error: str | None,
    ) -> Iterator[Measured]:
        """Every cell of one engine for a written (and registered) table."""
        label = state.engine.label
        if label not in self._baselines:
            self._baselines[label] = Baselines(list(self._done.values()))
        name, table = state.engine.name, written.table

        def done(read: Read) -> Cell | None:
            return self._done.get(read.key(name, table.table_type, scenario.id, table.format))

        for cell in cells.read_table(
            self.fleet,
            scenario,
            written,
            state,
            writer.versions,
            register_error,
            finished=done,
            shapes=self.options.shapes,
        ):
            yield state, self._baselines[label].note(scenario, cell)


def start_containers(images: dict[str, str]) -> None:
    """Before anything of a run with `--containers`: the container runtime found (or Podman's
    service started) and one container run, and the user's `images` (`--image`) found or
    pulled, so that a machine where containers cannot run stops the run in one sentence,
    before its folder is made; its engines' services then start in containers
    (`engines.infra.containers`)."""
    os.environ[CONTAINERS_ENV] = "1"
    os.environ[RUN_ENV] = owner_id()
    runtime = ready_runtime(cache_dir() / "containers" / "logs")
    services = image_services()
    for name, image in images.items():
        check_image(runtime, image, f"--image {name}={image}")
    os.environ[IMAGES_ENV] = json.dumps(
        {service: image for name, image in images.items() for service in services[name]}
    )
    # PySpark starts its JVMs with $SPARK_HOME/bin/spark-submit: the one that starts them in
    # containers.
    os.environ["SPARK_HOME"] = str(spark_home())


def reading_versions(engine: Engine, formats: tuple[str, ...]) -> str:
    """The engine's version as `run.json` records it: the one that reads the run's `formats`
    (`3.5.9`), or each where a format's tables are read by another release of the engine
    (`3.5.9 (Delta: 4.0.1)`; a run of that format alone: `4.0.1`)."""
    read = {f: engine.version_reading(f) for f in formats if f in engine.formats}
    apart = {f: v for f, v in read.items() if v != engine.version}
    if not apart:
        return engine.version
    if len(apart) == len(read) and len(set(apart.values())) == 1:
        return next(iter(apart.values()))
    return engine.version + "".join(f" ({format_named(f).title}: {v})" for f, v in apart.items())
