"""The run's engines: started together, checked on a plain Parquet table, given each table to
register, and restarted when one hangs or dies (every restart is recorded in `events.jsonl`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from lakecompat.engines.base import Engine
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import describe_error
from lakecompat.engines.infra.supervisor import active_services
from lakecompat.engines.infra.watchdog import Watchdog
from lakecompat.harness.results.store import record_event
from lakecompat.harness.run.control import CONTROL_KEY, control_table
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.scenario.compare import compare
from lakecompat.harness.writer import writer_class
from lakecompat.harness.writer.base import TableWriter, WriteResult

T = TypeVar("T")

#: Seconds registering a table (or the control check) may take at least. `--query-timeout`
#: bounds one cell's read; registering is DDL and Metastore calls, which a busy machine slows
#: beyond a short query timeout, yet a hung registration must still be ended.
REGISTER_LIMIT = 120.0


def register_timeout(query_timeout: float) -> float:
    """Seconds a registration may take: the longer of the query timeout and
    `REGISTER_LIMIT` (0: no limit, as with the query timeout)."""
    return 0 if query_timeout <= 0 else max(query_timeout, REGISTER_LIMIT)


def register_timeout_reason(seconds: float) -> str:
    """Why a registration (or the control check) was ended: the limit and where it comes from."""
    return (
        f"timeout after {seconds:g} s (the limit for registering a table and for the control "
        f"check: the longer of --query-timeout and {REGISTER_LIMIT:g} s)"
    )


@dataclass
class EngineState:
    """An engine of the run, and why it gives no more answers (None while it works)."""

    engine: Engine
    failure: str | None = None
    log: str = ""


@dataclass(frozen=True)
class EngineSpec:
    """An engine to start: its class, the format releases it carries apart from the writer's
    (`(format, release)` pairs; none: the writer's), and the label of its files (None: its
    name).

    A run that reads an engine's variants in lanes (`Engine.lanes`) starts an instance per
    lane: `variants` names the variants an instance reads (None: all of them), and `lane_of`
    is the label of the engine's first instance, whose registrations a further lane reads.
    """

    cls: type[Engine]
    carried: tuple[tuple[str, str], ...] = ()
    label: str | None = None
    variants: tuple[str, ...] | None = None
    lane_of: str | None = None
    #: Whether the instance reads in a process of its own, beside the writer (`apart_in_lanes`).
    apart: bool = False


class CutOff(Exception):
    """A registration or control check step outlasted its bound and was ended; the message
    says so."""


class Stopped(Exception):
    """The run is stopping: the readers' thread must not record or restart anything."""


def at_once(
    states: list[EngineState],
    act: Callable[[EngineState], None],
    name: str,
    first: Callable[[], None] | None = None,
) -> None:
    """`act(state)` for every engine at the same time, returning when all have returned: an
    engine sharing the writer's Spark session in this thread (PySpark's gateway belongs here,
    after `first()`), every other one on a thread of its own named `<name>-<label>`."""
    threads = [
        threading.Thread(target=act, args=(state,), name=f"{name}-{state.engine.label}")
        for state in states
        if not state.engine.shares_writer
    ]
    for thread in threads:
        thread.start()
    try:
        if first is not None:
            first()
        for state in states:
            if state.engine.shares_writer:
                act(state)
    except BaseException:
        # The run stops (Ctrl-C): a start waiting minutes for its engine to warm up, or a
        # check waiting for an answer, is cut short instead of waited for.
        _cut_short(states, threads)
        raise
    finally:
        for thread in threads:
            thread.join()


def _cut_short(states: list[EngineState], threads: list[threading.Thread]) -> None:
    """Kill every engine until the threads acting on them have returned: a kill ends what a
    start or a query waits for; an engine whose process starts after one kill meets the next.
    A server still starting is not yet its engine's to kill: every service started is."""
    while any(thread.is_alive() for thread in threads):
        for state in states:
            with contextlib.suppress(Exception):  # stopping anyway; stop() cleans up after
                state.engine.kill()
        for service in active_services():
            with contextlib.suppress(Exception):
                service.kill()
        for thread in threads:
            thread.join(timeout=1)


def start_engine(state: EngineState) -> None:
    """Start one engine; a failure to start becomes the engine's failure (its cells say it)."""
    try:
        state.engine.start()
    except Exception as exc:  # noqa: BLE001 - a failed engine becomes its cells
        state.failure = f"could not start: {describe_error(exc)}"
        state.log = state.engine.log_excerpt()


class Fleet:
    """Starts, checks, restarts and stops the engines of one run."""

    def __init__(self, progress: Progress, query_timeout: float, stopping: threading.Event) -> None:
        self.progress = progress
        #: Seconds one cell's read may take (0: no limit).
        self.query_timeout = query_timeout
        #: Seconds registering a table, or each step of the control check, may take.
        self.register_timeout = register_timeout(query_timeout)
        #: Set when the run stops early; a restart then does not happen.
        self.stopping = stopping

    @contextmanager
    def running(
        self,
        context: RunContext,
        specs: list[EngineSpec],
        settings: dict[str, dict[str, str]],
        warm_writer: bool = True,
    ) -> Iterator[list[EngineState]]:
        """Start the engines (with `settings` added to every variant); stop them on exit.
        `warm_writer`: start the writer's Spark beside them, for the tables to write."""
        states: list[EngineState] = []
        with ExitStack() as stack:
            for spec in specs:
                engine = spec.cls(context, dict(spec.carried), spec.label)
                if spec.variants is not None:
                    engine.narrow(spec.variants)
                if spec.lane_of is not None:
                    engine.lane_of = next(
                        s.engine for s in states if s.engine.label == spec.lane_of
                    )
                engine.apart = spec.apart
                extra = settings.get(spec.cls.name)
                if extra:  # every format's variants get them
                    engine.add_settings(extra)
                # Registered first: a start that fails halfway still stops what it started.
                stack.callback(engine.stop)
                states.append(EngineState(engine))
            names = dict.fromkeys(s.engine.name for s in states)  # an engine's lanes: once
            self.progress.stage(f"starting {', '.join(names)}")
            self.start_all(states, context if warm_writer else None)
            yield states

    def start_all(self, states: list[EngineState], context: RunContext | None = None) -> None:
        """Start the engines at the same time: each waits mostly for its own JVM to warm up.

        Spark starts in this thread (PySpark's gateway belongs here), the others on threads of
        their own; this returns when every start has succeeded or failed. With `context`, the
        writer's Spark starts here too when no reader shares it (it then reads in a process
        of its own, started on a thread like the others).
        """

        def writer() -> None:
            in_session = context is not None and any(
                writer_class(f).writes_in_run_session for f in context.formats
            )
            if in_session and not any(s.engine.shares_writer for s in states):
                # A writer that works in the run's own Spark session (Hudi's) warms it up.
                with contextlib.suppress(Exception):  # the writer's first job says why
                    context.spark.session()

        # Joined even when this thread fails: stopping an engine still starting would leak it.
        at_once(states, start_engine, "start", first=writer)

    def restart_everything(self, context: RunContext, states: list[EngineState]) -> None:
        """Stop every engine and Spark, and start them again.

        The Metastore keeps running: it is a catalog, not a reader, and what it holds (the
        run's tables, in its Derby database) would be the same after a restart; its own start
        was a fifth of each restart. Spark starts again in this thread while the other engines
        start beside it, as in `start_all`.
        """
        self.progress.stage("restarting every engine (one set of engines per scenario)")
        for state in states:
            state.engine.stop()
        working = [state for state in states if not state.failure]
        at_once(working, start_engine, "restart", first=context.spark.restart)

    def kill(self, states: list[EngineState]) -> None:
        """End whatever the engines are doing at once (the run stops)."""
        for state in states:
            with contextlib.suppress(Exception):  # stopping anyway; stop() cleans up after
                state.engine.kill()

    def control_checks(self, writer: TableWriter, states: list[EngineState]) -> None:
        """Every engine must read a plain Parquet table before its Hudi cells count.

        The engines register the table one after the other (one engine's registration may be
        another's, as for a scenario's table), then query it at the same time. The check is no
        cell's read: its registration and its query are each bounded like a registration, so
        a short `--query-timeout` does not fail a working engine here.
        """
        self.progress.stage("control check: a plain Parquet table")
        table, expected = control_table(writer)
        checked = [state for state in states if not state.failure]
        for state in checked:
            self._check_step(state, partial(state.engine.register, table))

        def query(state: EngineState) -> None:
            engine = state.engine
            sql = engine.read_sql(table, "snapshot")
            answer = self._check_step(state, partial(engine.query, sql, engine.control_variant()))
            if answer is not None:
                verdict = compare(expected, answer, CONTROL_KEY)
                if not verdict.equal:
                    state.failure = "control check read wrong: " + "; ".join(verdict.reasons)

        at_once([state for state in checked if not state.failure], query, "control")
        for state in checked:
            if state.failure:
                state.log = state.engine.log_excerpt()
                self.progress.note(f"{state.engine.name}: {state.failure}")

    def _check_step(self, state: EngineState, call: Callable[[], T]) -> T | None:
        """One bounded step of the control check: its result, or None with the engine's
        failure set."""
        try:
            return self._bounded(state, call)
        except CutOff as cut:
            state.failure = f"control check failed: {cut}"
        except Exception as exc:  # noqa: BLE001 - a failed check becomes the engine's cells
            state.failure = f"control check failed: {describe_error(exc)}"
        return None

    def _bounded(self, state: EngineState, call: Callable[[], T]) -> T:
        """`call()`, killed (an attached engine: cancelled) after the registration bound; a
        call so ended raises `CutOff`, whatever the kill made it raise."""
        with Watchdog(self.register_timeout, state.engine.kill) as dog:
            try:
                result = call()
            except Exception:
                if not dog.fired:
                    raise
        if dog.fired:  # even an answer that came as the kill did: the engine was killed
            raise CutOff(register_timeout_reason(self.register_timeout))
        return result

    def register(self, state: EngineState, written: WriteResult) -> str | None:
        """Register a written table with an engine: None, or why it could not.

        Registering is bounded by `register_timeout`, not by the query timeout: a hung
        registration is ended and the engine recovered, a slow one is not cut short.
        """
        if state.failure or not written.ok:
            return None
        if not state.engine.alive():  # it died since its last query: start it again first
            self.recover(state, f"{state.engine.name} was found dead")
            if state.failure:
                return None
        try:
            self._bounded(state, partial(state.engine.register, written.table))
        except CutOff as cut:
            self.recover(state, f"registering a table: {cut}")
            return str(cut)
        except Exception as failure:  # noqa: BLE001
            return self._register_failure(state, failure)
        return None

    def register_each(
        self, states: list[EngineState], written: WriteResult
    ) -> list[tuple[EngineState, str | None]]:
        """Register a written table with each engine, one after the other: (state, None or
        why it could not) in the order of `states`.

        A further lane of an engine (`Engine.lane_of`) reads the catalog its first instance
        registered the table in: it is not registered again, and it shares that instance's
        error (unless that instance has failed: then the lane registers the table itself).
        """
        registered: list[tuple[EngineState, str | None]] = []
        for state in states:
            first = state.engine.lane_of
            shared = [(s, e) for s, e in registered if first is not None and s.engine is first]
            if shared and not shared[0][0].failure and written.ok and not state.failure:
                if not state.engine.alive():  # it died since its last query: start it again
                    self.recover(state, f"{state.engine.name} was found dead")
                registered.append((state, shared[0][1]))
            else:
                registered.append((state, self.register(state, written)))
        return registered

    def _register_failure(self, state: EngineState, failure: Exception) -> str:
        """Why registering failed; an engine that died doing it is started again."""
        if state.engine.alive():
            return describe_error(failure)
        self.recover(state, f"{state.engine.name} died while registering a table")
        return f"{state.engine.name} died while registering the table: {describe_error(failure)}"

    def recover(self, state: EngineState, why: str) -> None:
        """Restart a hung or crashed engine; if that fails, its further cells are ENGINE_FAILED.

        Every restart is recorded in the run folder's `events.jsonl`.
        """
        if self.stopping.is_set():
            raise Stopped  # the engine was killed because the run stops
        name = state.engine.name
        if state.engine.attached:
            self._check_attached(state, why)
            return
        self.progress.stage(f"restarting {name} ({why})")
        event: dict[str, Any] = {"engine": name, "why": why, "log": state.engine.log_excerpt()}
        try:
            # A hung engine ignores a polite stop until its grace period runs out: end it now.
            state.engine.kill()
            state.engine.restart()
        except Exception as exc:  # noqa: BLE001 - an engine that cannot restart is a result
            state.failure = f"could not restart after: {why}: {describe_error(exc)}"
            state.log = state.engine.log_excerpt()
            event["restart_failed"] = describe_error(exc)
        record_event(state.engine.context.run_dir, {"event": "restart", **event})

    def _check_attached(self, state: EngineState, why: str) -> None:
        """An attached engine is not restarted: its query was cancelled (a timeout) and, if
        it no longer answers, its further cells are ENGINE_FAILED. Recorded in the events."""
        engine = state.engine
        event: dict[str, Any] = {"event": "attached_engine", "engine": engine.name, "why": why}
        if not engine.responsive():
            state.failure = f"the attached {engine.name} no longer answers, after: {why}"
            event["failed"] = True
            self.progress.note(f"{engine.name}: {state.failure}")
        record_event(engine.context.run_dir, event)
