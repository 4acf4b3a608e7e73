"""One run: write every table, read it with every engine, record every cell as it is known.

The parts a run is made of have modules of their own: `run_options` (what to run),
`run_plan` (scenarios, tables, known outcomes), `run_folder` (the folder, `run.json`,
resume and clean-up), `fleet` (the engines: start, control check, registration, restart)
and `cells` (one cell: query, judge, baseline note). This module schedules them: the writer
and Spark on one thread, the other engines one table behind on threads of their own.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from functools import partial

from engines import engine_class
from engines.base import TABLE_QUERY_TYPES, RunContext
from engines.hudi_writer import HudiWriter, WriteResult
from engines.spark_runtime import SparkRuntime
from harness import cells, run_folder, run_plan
from harness.cells import BASELINE_NOTE, Baselines
from harness.fleet import EngineState, Fleet, Stopped
from harness.outcomes import Cell, Evidence, Outcome
from harness.pipeline import Pipeline
from harness.progress import Progress
from harness.report import write_reports
from harness.results import ResultsWriter, load_run, record_event, write_run_info
from harness.run_folder import MIN_FREE_BYTES, check_free_disk, resume_options
from harness.run_options import DEFAULT_ENGINES, RunOptions, RunResult
from harness.scenario import Scenario, load_scenarios

__all__ = [
    "BASELINE_NOTE",
    "DEFAULT_ENGINES",
    "MIN_FREE_BYTES",
    "RunOptions",
    "RunResult",
    "Runner",
    "check_free_disk",
    "resume_options",
]


class Runner:
    """Runs the matrix of scenarios × table types × engines × query types × variants."""

    def __init__(self, options: RunOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.progress = progress or Progress()
        self.scenarios = run_plan.select_scenarios(options)
        self.known = run_plan.load_known(options)
        self.engine_classes = [engine_class(name) for name in options.engines]
        for name in options.engine_settings:
            if name not in options.engines:
                raise ValueError(f"--set names engine {name!r}, which this run does not read with")
        # Cells an interrupted run already finished, by key (empty for a new run).
        self._done: dict[tuple[str, ...], Cell] = {}
        if options.resume_dir is not None:
            _, finished = load_run(options.resume_dir)
            self._done = {cell.key: cell for cell in finished}
        self._baselines = Baselines(list(self._done.values()))
        # Set when the run stops early; held while a table's cells are recorded.
        self._stopping = threading.Event()
        self._record_lock = threading.Lock()
        self.fleet = Fleet(self.progress, options.query_timeout, self._stopping)

    def run(self) -> RunResult:
        """Execute the run; every cell is on disk the moment it is known."""
        options = self.options
        check_free_disk(options.resume_dir or options.reports_dir)
        if options.resume_dir:
            run_dir = run_folder.prepare_resume(options.resume_dir)
        else:
            run_dir = run_folder.new_run_dir(options.reports_dir)
        result = RunResult(run_dir, cells=list(self._done.values()))
        completed = False
        runtime = SparkRuntime(run_dir / "logs", options.hudi_version)
        context = RunContext(
            run_dir,
            runtime,
            hive_hudi=options.hive_hudi_version,
            spark_hudi=options.spark_hudi_version,
        )
        writer = HudiWriter(runtime, run_dir / "tables", options.step_timeout)
        results = ResultsWriter(run_dir)
        try:
            with self.fleet.running(
                context, self.engine_classes, options.engine_settings
            ) as engines:
                versions = {
                    s.engine.name: s.engine.version if not s.failure else "?" for s in engines
                }
                info = run_folder.run_info(
                    run_dir, options, writer.versions, versions, self.scenarios, self.known
                )
                write_run_info(run_dir, info)
                self.fleet.control_checks(writer, engines)
                writer.prepare(self.scenarios)
                planned = run_plan.planned_cells(self._tables(), [s.engine for s in engines])
                self.progress.begin(planned - len(self._done))
                self._run_tables(self._tables(), context, writer, engines, results, result)
                if options.rerun_pattern:
                    result.rerun_seconds, result.rerun_cells = self._rerun(context, writer, engines)
            completed = True
        finally:
            results.close()
            writer.close()
            context.close()
            self.progress.end()
            if completed:
                run_folder.clean(run_dir, options.keep_tables)
            if result.cells:
                result.judged = write_reports(run_dir, [run_dir, options.reports_dir / "latest"])
        return result

    def _tables(self, scenarios: list[Scenario] | None = None) -> Iterator[tuple[Scenario, str]]:
        chosen = self.scenarios if scenarios is None else scenarios
        return run_plan.tables(chosen, self.options.table_types)

    def _rerun(
        self, context: RunContext, writer: HudiWriter, engines: list[EngineState]
    ) -> tuple[float, list[Cell]]:
        """Write and read the scenarios of `rerun_pattern` again: (seconds, cells). The cells
        are not the run's: they go to a folder that is deleted with the scratch data."""
        pattern = self.options.rerun_pattern
        chosen = load_scenarios(self.options.scenarios_dir, pattern)
        if not chosen:
            raise ValueError(f"no scenario matches {pattern!r}")
        folder = context.run_dir / "rerun"
        folder.mkdir(exist_ok=True)
        discarded, again = ResultsWriter(folder), RunResult(folder)
        started = time.monotonic()
        try:
            self._run_tables(self._tables(chosen), context, writer, engines, discarded, again)
        finally:
            discarded.close()
        return time.monotonic() - started, again.cells

    def _run_tables(
        self,
        tables: Iterator[tuple[Scenario, str]],
        context: RunContext,
        writer: HudiWriter,
        engines: list[EngineState],
        results: ResultsWriter,
        result: RunResult,
    ) -> None:
        """Write every table and read it with every engine.

        Spark reads a table as soon as it is written (it shares the writer's JVM); the other
        engines read it on threads of their own while the writer writes the next table. The
        readers' thread records every cell, a table at a time: Spark's cells first, then the
        other engines' in the run's order, so the results file does not depend on timing.
        """
        inline = [state for state in engines if state.engine.shares_writer]
        beside = [state for state in engines if not state.engine.shares_writer]
        # Up to 4 written tables wait for the readers: reads and writes even out over a run.
        pipeline = Pipeline("lakecompat-readers", depth=4, inline=not beside)
        helpers = ThreadPoolExecutor(max(1, len(beside) - 1), "lakecompat-reader")
        previous: Scenario | None = None
        every_engine = [state.engine for state in engines]
        try:
            for scenario, table_type in tables:
                if run_plan.table_done(self._done, scenario, table_type, every_engine):
                    continue
                if self.options.isolate_scenarios and previous not in (None, scenario):
                    pipeline.drain()
                    self.fleet.restart_everything(context, engines)
                previous = scenario
                self.progress.stage(f"writing {scenario.id} ({table_type})")
                if not context.spark.alive():  # Spark died since its last job
                    record_event(context.run_dir, {"event": "restart", "engine": "spark-writer"})
                    context.spark.restart()
                written = writer.write(scenario, table_type)
                result.write_seconds.extend(written.step_seconds)
                first: Iterable[Cell] = self._read_everywhere(scenario, written, inline, writer)
                if not pipeline.inline:  # Spark's reads happen here, in the writer's thread
                    first = list(first)
                read_rest = partial(self._read_and_record, scenario, written, beside, writer)
                pipeline.submit(partial(read_rest, first, helpers, results, result))
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
        writer: HudiWriter,
        first: Iterable[Cell],
        helpers: ThreadPoolExecutor,
        results: ResultsWriter,
        result: RunResult,
    ) -> None:
        """Record the cells of `first` (read already, or read now when the pipeline is inline),
        then read the table with `engines`.

        The first engine's cells are recorded the moment they are known; the other engines
        read at the same time on helper threads, and their cells are recorded after it.
        """
        # Registration comes first, one engine after the other: Hive's DDL must not drop a
        # table while another engine reads it.
        registered = [(state, self.fleet.register(state, written)) for state in engines]
        later = [
            helpers.submit(list, self._read_with(scenario, written, state, writer, error))
            for state, error in registered[1:]
        ]
        try:
            now: Iterator[Cell] = iter(())
            if registered:
                state, error = registered[0]
                now = self._read_with(scenario, written, state, writer, error)
            for cell in itertools.chain(first, now):
                self._record(cell, results, result)
            for future in later:
                for cell in future.result():
                    self._record(cell, results, result)
        finally:
            wait_for(later)

    def _record(self, cell: Cell, results: ResultsWriter, result: RunResult) -> None:
        """Append a cell to the results file and report it (nothing once the run stops)."""
        with self._record_lock:
            if self._stopping.is_set():
                raise Stopped
            results.append(cell)
            result.cells.append(cell)
            self.progress.cell(cell)

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
        writer: HudiWriter,
    ) -> Iterator[Cell]:
        for state in engines:
            register_error = self.fleet.register(state, written)
            yield from self._read_with(scenario, written, state, writer, register_error)

    def _read_with(
        self,
        scenario: Scenario,
        written: WriteResult,
        state: EngineState,
        writer: HudiWriter,
        register_error: str | None,
    ) -> Iterator[Cell]:
        """Every cell of one engine for a written (and registered) table."""
        for query_type in TABLE_QUERY_TYPES[written.table.table_type]:
            for variant in state.engine.variants:
                key = (state.engine.name, written.table.table_type, query_type)
                if (*key, scenario.id, variant.name) in self._done:
                    continue
                if self._stopping.is_set():
                    raise Stopped
                cell = cells.measure(
                    self.fleet,
                    scenario,
                    written,
                    state,
                    query_type,
                    variant,
                    writer.versions,
                    register_error,
                )
                if register_error and cell.outcome is Outcome.PASS:
                    reason = f"could not register the table: {register_error}"
                    cell = cells.verdict(
                        cell, Outcome.ERROR, reason, Evidence(error=register_error)
                    )
                cell.evidence.files = written.files
                yield self._baselines.note(scenario, cell)
