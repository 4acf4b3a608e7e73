"""One run: load scenarios, start engines once, write every table, read it everywhere, record."""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from engines import engine_class, known_engines
from engines.base import (
    TABLE_QUERY_TYPES,
    Engine,
    RunContext,
    TableRef,
    Variant,
    describe_error,
    error_text,
)
from engines.hudi_writer import HudiWriter, WriteResult
from engines.spark_runtime import SparkRuntime
from harness import oracle
from harness.compare import compare
from harness.control import CONTROL_KEY, control_table
from harness.expectations import (
    Judged,
    Known,
    check_references,
    from_records,
    load_expectations,
    to_records,
)
from harness.outcomes import Cell, Evidence, Outcome
from harness.pipeline import Pipeline
from harness.progress import Progress
from harness.report import write_reports
from harness.results import (
    RUN_FILE,
    ResultsError,
    ResultsWriter,
    load_run,
    record_event,
    write_run_info,
)
from harness.scenario import Scenario, load_scenarios
from harness.watchdog import Watchdog

BASELINE_NOTE = "fails without any schema change"
#: Folders of a run that only the services need; a resumed run starts them afresh.
_SERVICE_STATE = ("hive-metastore", "hiveserver2", "warehouse", "spark", "trino")
#: What a completed run deletes: the services' data (their configuration and logs stay).
_SCRATCH = (
    "hive-metastore/metastore_db",
    "hiveserver2/scratch",
    "warehouse",
    "spark",
    "trino/var",
    "trino/data",
    "rerun",
)
#: Free space a run needs where it writes (tables, logs and the engines' scratch data).
MIN_FREE_BYTES = 2 * 1024**3
DEFAULT_ENGINES = ("spark", "hive", "trino")


@dataclass
class RunOptions:
    """What to run; the defaults are the default matrix."""

    scenarios_dir: Path = Path("scenarios")
    pattern: str | None = None
    engines: tuple[str, ...] = DEFAULT_ENGINES
    table_types: tuple[str, ...] = ("cow", "mor")
    reports_dir: Path = Path("reports")
    hudi_version: str | None = None
    #: Folder of known-outcome files (expectations/*.yaml); None: every cell is expected to PASS.
    expectations_dir: Path | None = None
    #: Extra reader settings per engine, applied to every variant (they win over the variant's).
    engine_settings: dict[str, dict[str, str]] = field(default_factory=dict)
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


@dataclass
class RunResult:
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


@dataclass
class _EngineState:
    engine: Engine
    failure: str | None = None
    log: str = ""


class _Stopped(Exception):
    """The run is stopping: the readers' thread must not record or restart anything."""


class Runner:
    """Runs the matrix of scenarios × table types × engines × query types × variants."""

    def __init__(self, options: RunOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.progress = progress or Progress()
        self.scenarios = self._select_scenarios()
        self.known = self._load_known()
        self.engine_classes = [engine_class(name) for name in options.engines]
        for name in options.engine_settings:
            if name not in options.engines:
                raise ValueError(f"--set names engine {name!r}, which this run does not read with")
        # Outcome of the baseline scenario per engine, table type, query type and variant.
        self._baseline: dict[tuple[str, ...], Outcome] = {}
        # Cells an interrupted run already finished, by key (empty for a new run).
        self._done: dict[tuple[str, ...], Cell] = {}
        if options.resume_dir is not None:
            _, cells = load_run(options.resume_dir)
            self._done = {cell.key: cell for cell in cells}
            for cell in cells:
                if cell.category == "baseline":
                    self._baseline[cell.key[:3] + cell.key[4:]] = cell.outcome
        # Set when the run stops early; held while a table's cells are recorded.
        self._stopping = threading.Event()
        self._record_lock = threading.Lock()

    def run(self) -> RunResult:
        """Execute the run; every cell is on disk the moment it is known."""
        check_free_disk(self.options.resume_dir or self.options.reports_dir)
        run_dir = self._prepare_resume() if self.options.resume_dir else self._new_run_dir()
        result = RunResult(run_dir, cells=list(self._done.values()))
        completed = False
        runtime = SparkRuntime(run_dir / "logs", self.options.hudi_version)
        context = RunContext(run_dir, runtime)
        writer = HudiWriter(runtime, run_dir / "tables", self.options.step_timeout)
        results = ResultsWriter(run_dir)
        try:
            with self._engines(context) as engines:
                write_run_info(run_dir, self._run_info(run_dir, writer, engines))
                self._control_checks(writer, engines)
                self.progress.begin(self._planned_cells(engines) - len(self._done))
                self._run_tables(self._tables(), context, writer, engines, results, result)
                if self.options.rerun_pattern:
                    result.rerun_seconds, result.rerun_cells = self._rerun(context, writer, engines)
            completed = True
        finally:
            results.close()
            context.close()
            self.progress.end()
            if completed:
                self._clean(run_dir)
            if result.cells:
                result.judged = write_reports(
                    run_dir, [run_dir, self.options.reports_dir / "latest"]
                )
        return result

    def _rerun(
        self, context: RunContext, writer: HudiWriter, engines: list[_EngineState]
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
        engines: list[_EngineState],
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
        try:
            for scenario, table_type in tables:
                if self._table_done(scenario, table_type, engines):
                    continue
                if self.options.isolate_scenarios and previous not in (None, scenario):
                    pipeline.drain()
                    self._restart_everything(context, engines)
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
        engines: list[_EngineState],
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
        registered = [(state, self._register(state, written)) for state in engines]
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
            for cells in later:
                for cell in cells.result():
                    self._record(cell, results, result)
        finally:
            wait_for(later)

    def _record(self, cell: Cell, results: ResultsWriter, result: RunResult) -> None:
        """Append a cell to the results file and report it (nothing once the run stops)."""
        with self._record_lock:
            if self._stopping.is_set():
                raise _Stopped
            results.append(cell)
            result.cells.append(cell)
            self.progress.cell(cell)

    def _stop_readers(self, engines: list[_EngineState], pipeline: Pipeline) -> None:
        """The run stops early: record nothing more, and end a read in progress at once."""
        with self._record_lock:
            self._stopping.set()
        if pipeline.inline:
            return
        for state in engines:
            with contextlib.suppress(Exception):  # stopping anyway; stop() cleans up after
                state.engine.kill()
        pipeline.wait_stopped(timeout=60)

    def _restart_everything(self, context: RunContext, engines: list[_EngineState]) -> None:
        """Stop every engine, the Metastore and Spark, and start them again."""
        self.progress.stage("restarting every engine (one set of engines per scenario)")
        for state in engines:
            state.engine.stop()
        context.restart_metastore()
        context.spark.restart()
        self._start_all([state for state in engines if not state.failure])

    def _clean(self, run_dir: Path) -> None:
        """Delete what only the engines needed (and the tables, unless kept)."""
        scratch = [*_SCRATCH, *(() if self.options.keep_tables else ("tables",))]
        for name in scratch:
            shutil.rmtree(run_dir / name, ignore_errors=True)

    def _prepare_resume(self) -> Path:
        """Take the finished cells of the interrupted run; clear the services' state."""
        run_dir = self.options.resume_dir
        assert run_dir is not None
        for state in _SERVICE_STATE:
            shutil.rmtree(run_dir / state, ignore_errors=True)
        return run_dir

    def _table_done(self, scenario: Scenario, table_type: str, engines: list[_EngineState]) -> bool:
        """Whether a resumed run already has every cell of this table."""
        if not self._done:
            return False
        return all(
            (state.engine.name, table_type, query_type, scenario.id, variant.name) in self._done
            for state in engines
            for query_type in TABLE_QUERY_TYPES[table_type]
            for variant in state.engine.variants
        )

    def _load_known(self) -> list[Known]:
        if self.options.known_records is not None:
            return from_records(self.options.known_records)
        folder = self.options.expectations_dir
        if folder is None:
            return []
        known = load_expectations(folder)
        scenario_ids = [s.id for s in load_scenarios(self.options.scenarios_dir)]
        check_references(known, scenario_ids, known_engines())
        return known

    def _select_scenarios(self) -> list[Scenario]:
        everything = load_scenarios(self.options.scenarios_dir)
        chosen = load_scenarios(self.options.scenarios_dir, self.options.pattern)
        if not chosen:
            raise ValueError(f"no scenario matches {self.options.pattern!r}")
        # The baselines always run: they tell general failures from evolution failures.
        baselines = [s for s in everything if s.spec.baseline and s not in chosen]
        if self.options.reverse_order:
            chosen = [s for s in chosen if s.spec.baseline] + [
                s for s in reversed(chosen) if not s.spec.baseline
            ]
        return baselines + chosen

    def _tables(self, scenarios: list[Scenario] | None = None) -> Iterator[tuple[Scenario, str]]:
        for scenario in self.scenarios if scenarios is None else scenarios:
            for table_type in self.options.table_types:
                if table_type in scenario.spec.table_types:
                    yield scenario, table_type

    def _planned_cells(self, engines: list[_EngineState]) -> int:
        return sum(
            len(TABLE_QUERY_TYPES[table_type]) * len(state.engine.variants)
            for _, table_type in self._tables()
            for state in engines
        )

    @contextmanager
    def _engines(self, context: RunContext) -> Iterator[list[_EngineState]]:
        states = []
        with ExitStack() as stack:
            for cls in self.engine_classes:
                engine = cls(context)
                extra = self.options.engine_settings.get(cls.name)
                if extra:
                    engine.variants = tuple(
                        Variant(v.name, {**v.settings, **extra}) for v in engine.variants
                    )
                # Registered first: a start that fails halfway still stops what it started.
                stack.callback(engine.stop)
                states.append(_EngineState(engine))
            self.progress.stage(f"starting {', '.join(s.engine.name for s in states)}")
            self._start_all(states)
            yield states

    def _start_all(self, states: list[_EngineState]) -> None:
        """Start the engines at the same time: each waits mostly for its own JVM to warm up.

        Spark starts in this thread (PySpark's gateway belongs here), the others on threads of
        their own; this returns when every start has succeeded or failed.
        """

        def start(state: _EngineState) -> None:
            try:
                state.engine.start()
            except Exception as exc:  # noqa: BLE001 - a failed engine becomes its cells
                state.failure = f"could not start: {describe_error(exc)}"
                state.log = state.engine.log_excerpt()

        threads = [
            threading.Thread(target=start, args=(state,), name=f"start-{state.engine.name}")
            for state in states
            if not state.engine.shares_writer
        ]
        for thread in threads:
            thread.start()
        try:
            for state in states:
                if state.engine.shares_writer:
                    start(state)
        finally:
            for thread in threads:  # stopping an engine that is still starting would leak it
                thread.join()

    def _control_checks(self, writer: HudiWriter, engines: list[_EngineState]) -> None:
        """Every engine must read a plain Parquet table before its Hudi cells count."""
        self.progress.stage("control check: a plain Parquet table")
        table, expected = control_table(writer)
        for state in engines:
            if state.failure:
                continue
            sql = state.engine.read_sql(table, "snapshot")
            try:
                state.engine.register(table)
                answer = state.engine.query(sql, state.engine.variants[0])
            except Exception as exc:  # noqa: BLE001
                state.failure = f"control check failed: {describe_error(exc)}"
            else:
                verdict = compare(expected, answer, CONTROL_KEY)
                if not verdict.equal:
                    state.failure = "control check read wrong: " + "; ".join(verdict.reasons)
            if state.failure:
                state.log = state.engine.log_excerpt()
                self.progress.note(f"{state.engine.name}: {state.failure}")

    def _read_everywhere(
        self,
        scenario: Scenario,
        written: WriteResult,
        engines: list[_EngineState],
        writer: HudiWriter,
    ) -> Iterator[Cell]:
        for state in engines:
            register_error = self._register(state, written)
            yield from self._read_with(scenario, written, state, writer, register_error)

    def _read_with(
        self,
        scenario: Scenario,
        written: WriteResult,
        state: _EngineState,
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
                    raise _Stopped
                cell = self._cell(
                    scenario, written, state, query_type, variant, writer, register_error
                )
                if register_error and cell.outcome is Outcome.PASS:
                    reason = f"could not register the table: {register_error}"
                    cell = _verdict(cell, Outcome.ERROR, reason, Evidence(error=register_error))
                cell.evidence.files = written.files
                yield self._with_baseline(scenario, cell)

    def _register(self, state: _EngineState, written: WriteResult) -> str | None:
        if state.failure or not written.ok:
            return None
        if not state.engine.alive():  # it died since its last query: start it again first
            self._recover(state, f"{state.engine.name} was found dead")
            if state.failure:
                return None
        failure: Exception | None = None
        with Watchdog(self.options.query_timeout, state.engine.kill) as dog:
            try:
                state.engine.register(written.table)
            except Exception as exc:  # noqa: BLE001
                failure = exc
        if dog.fired:
            self._recover(state, f"registering a table: {dog.reason}")
            return dog.reason
        if failure is None:
            return None
        if state.engine.alive():
            return describe_error(failure)
        self._recover(state, f"{state.engine.name} died while registering a table")
        return f"{state.engine.name} died while registering the table: {describe_error(failure)}"

    def _recover(self, state: _EngineState, why: str) -> None:
        """Restart a hung or crashed engine; if that fails, its further cells are ENGINE_FAILED.

        Every restart is recorded in the run folder's `events.jsonl`.
        """
        if self._stopping.is_set():
            raise _Stopped  # the engine was killed because the run stops
        name = state.engine.name
        self.progress.stage(f"restarting {name} ({why})")
        event: dict[str, Any] = {"engine": name, "why": why, "log": state.engine.log_excerpt()}
        try:
            state.engine.restart()
        except Exception as exc:  # noqa: BLE001 - an engine that cannot restart is a result
            state.failure = f"could not restart after: {why}: {describe_error(exc)}"
            state.log = state.engine.log_excerpt()
            event["restart_failed"] = describe_error(exc)
        record_event(state.engine.context.run_dir, {"event": "restart", **event})

    def _cell(
        self,
        scenario: Scenario,
        written: WriteResult,
        state: _EngineState,
        query_type: str,
        variant: Variant,
        writer: HudiWriter,
        register_error: str | None,
    ) -> Cell:
        engine, table = state.engine, written.table
        cell = Cell(
            scenario=scenario.id,
            category=scenario.category,
            title=scenario.spec.title,
            table_type=table.table_type,
            query_type=query_type,
            engine=engine.name,
            engine_version=engine.version if not state.failure else "?",
            variant=variant.name,
            settings=dict(variant.settings),
            writer=writer.versions,
            outcome=Outcome.PASS,
        )
        if state.failure:
            return _verdict(cell, Outcome.ENGINE_FAILED, state.failure, Evidence(log=state.log))
        probe = engine.probe_only.get((table.table_type, query_type))
        # Whatever the writer did, an engine without the query type gives UNSUPPORTED, so the
        # cell does not flip when only the writer changes. Probing needs a written table.
        if not engine.supports(table.table_type, query_type) and (probe is None or not written.ok):
            reason = engine.unsupported_reason(table.table_type, query_type)
            if probe is not None:
                reason = f"{probe}; not tried: the writer stopped at {written.failed_at}"
            return _verdict(cell, Outcome.UNSUPPORTED, reason, Evidence())
        if not written.ok:
            return _writer_verdict(cell, written)
        unmet = (written.files or {}).get("unmet")
        if unmet:
            reason = f"the table does not hold what {scenario.id} is about: {'; '.join(unmet)}"
            return _verdict(cell, Outcome.ERROR, reason, Evidence())
        if register_error:
            return cell
        sql = engine.read_sql(table, query_type)
        started = time.monotonic()
        failure: Exception | None = None
        with Watchdog(self.options.query_timeout, engine.kill) as dog:
            try:
                answer = engine.query(sql, variant)
            except Exception as exc:  # noqa: BLE001 - an engine error is a result
                failure = exc
        if dog.fired or (failure is not None and not engine.responsive()):
            # A hung or crashed engine: the cell says so, the engine starts again.
            cell.seconds = round(time.monotonic() - started, 3)
            error = describe_error(failure) if failure is not None else None
            if dog.fired:
                reason = dog.reason
            elif engine.alive():
                reason = f"{engine.name} stopped answering: {error}"
            else:
                reason = f"{engine.name} died during the query: {error}"
            evidence = Evidence(sql=sql, error=error, log=engine.log_excerpt())
            self._recover(state, reason)
            return _verdict(cell, Outcome.ERROR, reason, evidence)
        if failure is not None:
            cell.seconds = round(time.monotonic() - started, 3)
            error = describe_error(failure)
            evidence = Evidence(sql=sql, error=error_text(failure))
            if probe is not None:
                reason = f"{probe}; reading the table anyway failed: {error}"
                return _verdict(cell, Outcome.UNSUPPORTED, reason, evidence)
            return _verdict(cell, Outcome.ERROR, error, evidence)
        cell.seconds = round(time.monotonic() - started, 3)
        last = table.partition_by if engine.partition_columns_last else ()
        cell = _judge(cell, scenario, table, query_type, answer, sql, last)
        if probe is not None:
            found = "returned the expected rows" if cell.outcome is Outcome.PASS else cell.reason
            cell.outcome, cell.reason = Outcome.UNSUPPORTED, f"{probe}; reading it anyway: {found}"
        return cell

    def _with_baseline(self, scenario: Scenario, cell: Cell) -> Cell:
        combination = cell.key[:3] + cell.key[4:]
        if scenario.spec.baseline:
            self._baseline[combination] = cell.outcome
            return cell
        baseline = self._baseline.get(combination)
        failing = (Outcome.PASS, Outcome.REJECTED, Outcome.UNSUPPORTED)
        if baseline is not None and baseline not in failing and cell.outcome not in failing:
            cell.reason = f"{cell.reason}; {BASELINE_NOTE} (baseline: {baseline})"
        return cell

    def _new_run_dir(self) -> Path:
        # Absolute, because Hudi resolves table paths as URIs.
        runs = self.options.reports_dir.resolve() / "runs"
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        run_dir = runs / stamp
        suffix = 1
        while run_dir.exists():
            suffix += 1
            run_dir = runs / f"{stamp}-{suffix}"
        run_dir.mkdir(parents=True)
        return run_dir

    def _run_info(
        self, run_dir: Path, writer: HudiWriter, engines: list[_EngineState]
    ) -> dict[str, object]:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        info: dict[str, object] = {
            "run_id": run_dir.name,
            "started": now,
            "writer": writer.versions,
            "engines": {
                s.engine.name: (s.engine.version if not s.failure else "?") for s in engines
            },
            "engine_order": [s.engine.name for s in engines],
            "scenarios": [s.id for s in self.scenarios],
            "table_types": list(self.options.table_types),
            "pattern": self.options.pattern,
            "engine_settings": self.options.engine_settings,
            "known": self.options.known_records
            or to_records(self.known, self.options.expectations_dir or Path()),
        }
        if self.options.resume_dir is not None:
            before, _ = load_run(run_dir)
            info["started"] = before.get("started", now)
            info["resumed"] = [*before.get("resumed", []), now]
        return info


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


def resume_options(run_dir: Path, scenarios_dir: Path, reports_dir: Path) -> RunOptions:
    """The options of the interrupted run in `run_dir`, to complete it with `Runner`."""
    info, _ = load_run(run_dir)
    if not info:
        raise ResultsError(
            f"{run_dir}: no {RUN_FILE}; the run stopped before its engines had started, "
            "so there is nothing to resume: start a new run"
        )
    options = RunOptions(
        scenarios_dir=scenarios_dir,
        pattern=info.get("pattern"),
        engines=tuple(info.get("engine_order") or info["engines"]),
        table_types=tuple(info["table_types"]),
        reports_dir=reports_dir,
        hudi_version=info["writer"]["hudi"],
        engine_settings=info.get("engine_settings") or {},
        resume_dir=run_dir.resolve(),
        known_records=info.get("known") or [],
    )
    chosen = [s.id for s in Runner(options, Progress(quiet=True)).scenarios]
    if chosen != info["scenarios"]:
        missing = sorted(set(info["scenarios"]) - set(chosen))
        added = sorted(set(chosen) - set(info["scenarios"]))
        raise ResultsError(
            f"{run_dir}: the scenario files changed since this run started "
            f"(missing: {', '.join(missing) or 'none'}; new: {', '.join(added) or 'none'}); "
            "resuming would not give the run's matrix: start a new run"
        )
    return options


def _verdict(cell: Cell, outcome: Outcome, reason: str, evidence: Evidence) -> Cell:
    cell.outcome, cell.reason, cell.evidence = outcome, reason, evidence
    return cell


def _writer_verdict(cell: Cell, written: WriteResult) -> Cell:
    sql = ";\n".join(written.sql or []) or None
    if written.rejected:
        reason = f"the writer refused {written.failed_at}: {written.message}"
        return _verdict(cell, Outcome.REJECTED, reason, Evidence(sql=sql, error=written.message))
    reason = f"the writer failed at {written.failed_at}: {written.message}"
    return _verdict(cell, Outcome.ERROR, reason, Evidence(sql=sql, error=written.message))


def _judge(
    cell: Cell,
    scenario: Scenario,
    table: TableRef,
    query_type: str,
    answer: pa.Table,
    sql: str,
    last: tuple[str, ...] = (),
) -> Cell:
    expected = oracle.expected(scenario.spec, table.table_type, query_type)
    if last:  # the engine lists partition columns after the data columns, as Hive tables do
        names = expected.column_names
        expected = expected.select(
            [n for n in names if n not in last] + [n for n in last if n in names]
        )
    verdict = compare(expected, answer, table.key)
    if verdict.equal:
        return _verdict(cell, Outcome.PASS, "", Evidence(sql=sql))
    evidence = Evidence(sql=sql, sample=verdict.sample)
    return _verdict(cell, Outcome.WRONG, "; ".join(verdict.reasons), evidence)
