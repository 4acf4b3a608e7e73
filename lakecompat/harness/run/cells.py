"""One cell: ask an engine for a written table, judge the answer against the oracle, and note
when the baseline already fails the same way."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.errors import (
    LOG_LIMIT,
    QueryError,
    describe_error,
    error_text,
    log_since,
    log_size,
)
from lakecompat.engines.formats import format_named
from lakecompat.engines.infra.watchdog import Watchdog
from lakecompat.engines.reasons import stable_reason
from lakecompat.engines.shape import ALL, COUNT_COLUMN, Shape, base_variant
from lakecompat.engines.table import TableRef
from lakecompat.harness.results.causes import (
    failure_kind,
    own_reason,
    same_failure,
    without_run_names,
)
from lakecompat.harness.results.outcomes import (
    BASELINE_NOTE,
    BASELINE_OTHER,
    NOTHING_TO_READ,
    ROWS_LOST,
    Cell,
    Evidence,
    Outcome,
)
from lakecompat.harness.results.plain_reads import AS_PLAIN, answer_column, misread
from lakecompat.harness.results.store import record_event
from lakecompat.harness.run.fleet import EngineState, Fleet, Stopped
from lakecompat.harness.run.reads import SHAPED_QUERY_TYPE, Read, table_reads
from lakecompat.harness.scenario.changelog import compare_changes
from lakecompat.harness.scenario.compare import Comparison, compare
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.shapes import (
    DEFAULT_SHAPES,
    change_of,
    expected_shape,
    written_before,
)
from lakecompat.harness.scenario.type_shapes import ALWAYS_BASELINE
from lakecompat.harness.writer.base import WriteResult


def measure(
    fleet: Fleet,
    scenario: Scenario,
    written: WriteResult,
    state: EngineState,
    query_type: str,
    variant: Variant,
    writer: dict[str, str],
    register_error: str | None,
    shape: Shape = ALL,
    plain: Cell | None = None,
) -> Cell:
    """The cell of one engine, query type, variant and shape for a written (and registered)
    table; a shaped read is judged beside `plain`, its table's `SELECT *` snapshot cell
    (`harness.results.plain_reads`; None: not read)."""
    engine, table = state.engine, written.table
    cell = Cell(
        scenario=scenario.id,
        category=scenario.category,
        title=scenario.spec.title,
        table_type=table.table_type,
        query_type=query_type,
        engine=engine.name,
        engine_version=engine.version_reading(table.format) if not state.failure else "?",
        variant=variant.name,
        settings=dict(variant.settings),
        writer=writer,
        outcome=Outcome.PASS,
        reader_hudi="" if state.failure else engine.carried_release(table.format),
        table_from="cache" if written.cached else "written",
        shape=shape.name,
        format=table.format,
        runs_in=engine.runs_in(table.format),
    )
    if state.failure:
        return verdict(cell, Outcome.ENGINE_FAILED, state.failure, Evidence(log=state.log))
    reading = engine.reading(table.format)
    probe = reading.probe_only.get((table.table_type, query_type))
    # Whatever the writer did, an engine without the query type gives UNSUPPORTED, so the
    # cell does not flip when only the writer changes. Probing needs a written table.
    supported = engine.supports(table.table_type, query_type, table.format)
    if supported and probe is None:
        # A query with nothing to read says nothing about the change: UNSUPPORTED, with what
        # reading it anyway gives.
        probe = empty_range(table, query_type)
    if not supported and (probe is None or not written.ok):
        reason = engine.unsupported_reason(table.table_type, query_type, table.format)
        if probe is not None:
            reason = f"{probe}; not tried: the writer stopped at {written.failed_at}"
        return verdict(cell, Outcome.UNSUPPORTED, reason, Evidence())
    if not written.ok:
        return writer_verdict(cell, written)
    if probe is not None and variant.name != engine.default_variant_name(table.format):
        # The cell is UNSUPPORTED whatever the table reads as: one variant's probe shows
        # what reading it anyway gives (in Hive these probes were a quarter of its queries).
        default = engine.default_variant_name(table.format)
        reason = f"{probe}; read anyway in the {default} variant only"
        return verdict(cell, Outcome.UNSUPPORTED, reason, Evidence())
    unmet = (written.files or {}).get("unmet")
    if unmet:
        reason = f"the table does not hold what {scenario.id} is about: {'; '.join(unmet)}"
        return verdict(cell, Outcome.ERROR, reason, Evidence())
    unsupported = engine.shape_unsupported(shape) or engine.variant_unsupported(variant)
    if unsupported is not None:
        return verdict(cell, Outcome.UNSUPPORTED, unsupported, Evidence())
    if register_error:
        reason = f"could not register the table: {register_error}"
        return verdict(cell, Outcome.ERROR, reason, Evidence(error=register_error))
    sql = engine.shaped_sql(table, query_type, shape)
    shown = engine.evidence_sql(table, query_type, variant, shape)
    retried: str | None = None  # why the query was asked a second time
    while True:
        log_start = log_size(engine.log_path)
        started = time.monotonic()
        answer, failure, dog = ask(fleet, engine, table, sql, variant)
        if not dog.fired and (failure is None or engine.responsive()):
            break
        # A hung or crashed engine: the cell says so, the engine starts again.
        cell.seconds = round(time.monotonic() - started, 3)
        error = describe_error(failure) if failure is not None else None
        died = not dog.fired and not engine.alive()
        if dog.fired:
            reason = dog.reason
        elif not died:
            reason = f"{engine.name} stopped answering: {error}"
        else:
            reason = f"{engine.name} died during the query: {error}"
        text = error_text(failure) if failure is not None else None
        evidence = Evidence(sql=shown, error=text, log=failure_log(engine, log_start, failure))
        fleet.recover(state, reason)
        if died and retried is None and state.failure is None and not engine.attached:
            # An engine can die of what earlier queries left behind (a heap used up over
            # thousands of reads): the cell's own answer is the one a fresh engine gives.
            retried = reason
            continue
        if retried is not None:
            reason = f"{reason} (also when asked again on a freshly started {engine.name})"
        return verdict(cell, Outcome.ERROR, reason, evidence)
    if retried is not None:
        # The run's events say which cells were asked twice, and why (`events.jsonl`).
        asked = {"event": "asked_again", "engine": engine.name, "why": retried}
        asked.update(scenario=scenario.id, table_type=table.table_type, query_type=query_type)
        record_event(
            engine.context.run_dir, {**asked, "variant": variant.name, "shape": shape.name}
        )
    if failure is not None:
        cell.seconds = round(time.monotonic() - started, 3)
        error = describe_error(failure)
        log = failure_log(engine, log_start, failure)
        evidence = Evidence(sql=shown, error=error_text(failure), log=log)
        if probe is not None:
            reason = f"{probe}; reading the table anyway failed: {error}"
            return verdict(cell, Outcome.UNSUPPORTED, reason, evidence)
        return verdict(cell, Outcome.ERROR, error, evidence)
    cell.seconds = round(time.monotonic() - started, 3)
    # The Hive table layout lists partition columns last; other tables keep their order.
    hive_layout = format_named(table.format).partitions_last
    last = partitions_last(engine, table.partition_by, shape) if hive_layout else ()
    cell = judge(cell, scenario, table, query_type, answer, shown, last, shape, plain)
    if probe is not None:
        found = "returned the expected rows" if cell.outcome is Outcome.PASS else cell.reason
        cell.outcome, cell.reason = Outcome.UNSUPPORTED, f"{probe}; reading it anyway: {found}"
    return cell


#: The query types that read what was written after the reference state.
RANGE_QUERY_TYPES = ("incremental", "changelog")


def ask(
    fleet: Fleet, engine: Engine, table: TableRef, sql: str, variant: Variant
) -> tuple[Any, Exception | None, Watchdog]:
    """Ask `engine` for `sql` under the run's query timeout: (answer, failure, watchdog)."""
    answer: Any = None
    failure: Exception | None = None
    with Watchdog(fleet.query_timeout, engine.kill) as dog:
        try:
            answer = engine.query_table(table, sql, variant)
        except Exception as exc:  # noqa: BLE001 - an engine error is a result
            failure = exc
    return answer, failure, dog


def empty_range(table: TableRef, query_type: str) -> str | None:
    """Why a read of what was written after the reference has nothing to read on `table`, or
    None. An Iceberg schema change commits no snapshot, so a scenario that only changes the
    schema after its reference leaves an incremental or changelog read an empty range (whose
    start is the current snapshot, which Iceberg refuses): the query has no meaning there."""
    if query_type not in RANGE_QUERY_TYPES or table.committed is None or table.committed:
        return None
    return (
        f"{NOTHING_TO_READ}: no snapshot was committed after the reference snapshot (the "
        "steps after it change only the schema, and a schema change commits no Iceberg "
        f"snapshot), so the {query_type} read has an empty range"
    )


def failure_log(engine: Engine, start: int, failure: BaseException | None = None) -> str | None:
    """The engine's log as a failed query's evidence: what the query wrote to it (from
    `start`, up to where `failure` says the query's part ends), cut to the failure; where it
    wrote nothing, the log's last lines, saying so."""
    path = engine.log_path
    written = log_since(
        path, start, end=failure.log_end if isinstance(failure, QueryError) else None
    )
    if path is not None and written:
        return f"{path.name}, written during the query:\n{written}"
    tail = "\n".join(engine.log_excerpt().splitlines()[-15:])[-LOG_LIMIT:]
    if not tail:
        return None
    where = path.name if path is not None else f"{engine.name}'s log"
    return f"{where}: nothing written during the query; its last lines:\n{tail}"


def read_table(
    fleet: Fleet,
    scenario: Scenario,
    written: WriteResult,
    state: EngineState,
    writer: dict[str, str],
    register_error: str | None,
    finished: Callable[[Read], Cell | None] = lambda read: None,
    shapes: tuple[str, ...] = DEFAULT_SHAPES,
) -> Iterator[Cell]:
    """Every cell of one engine for a written table (`harness.run.reads`: each query type of
    its table type × each of the engine's variants, then the query shapes `shapes` allows),
    measured in that order (`finished` gives the cells a resumed run has: they are not read
    again). A shaped cell is judged beside its table's `SELECT *` snapshot cell, measured
    before it (or finished). `register_error` is what `Fleet.register` said; its cells are
    ERROR.

    Raises `Stopped` between cells once the run stops.
    """
    table = written.table
    plains: dict[str, Cell] = {}  # the SELECT * snapshot cell of each variant
    for read in table_reads(
        state.engine, scenario, table.table_type, shapes, table_format=table.format
    ):
        cell = finished(read)
        fresh = cell is None
        if cell is None:
            if fleet.stopping.is_set():
                raise Stopped
            plain = plains.get(base_variant(read.variant.name))
            cell = measure(
                fleet,
                scenario,
                written,
                state,
                read.query_type,
                read.variant,
                writer,
                register_error,
                read.shape,
                plain,
            )
            cell.evidence.files = written.files
        if read.shape == ALL and read.query_type == SHAPED_QUERY_TYPE:
            plains[read.variant.name] = cell
        if fresh:
            yield cell


class Baselines:
    """The baseline scenarios' cells per engine, table format and type, query type and variant
    (their tables change no column, so they are read with `SELECT *` only; a shaped cell is
    compared with those)."""

    def __init__(self, finished: list[Cell] | None = None) -> None:
        self._cells: dict[tuple[str, ...], list[Cell]] = defaultdict(list)
        for cell in finished or []:  # the cells a resumed run has already
            if cell.category == "baseline":
                self._keep(cell)

    def _keep(self, cell: Cell) -> None:
        """`baseline/no_change` first: the baseline named where every one fails."""
        kept = self._cells[_combination(cell)]
        kept.insert(0 if cell.scenario == ALWAYS_BASELINE else len(kept), cell)

    def note(self, scenario: Scenario, cell: Cell) -> Cell:
        """Remember a baseline cell. To a failing cell, add that it fails the same way without
        any schema change (naming the baseline that does); or, where no baseline table reads
        right either, how they fail."""
        if scenario.spec.baseline:
            self._keep(cell)
            return cell
        baselines = self._cells.get(_combination(cell), [])
        if not baselines or failure_kind(cell) is None:
            return cell
        same = next((b for b in baselines if same_failure(cell, b)), None)
        if same is not None:
            cell.reason = f"{cell.reason}; {BASELINE_NOTE} ({same.scenario}: {same.outcome})"
        elif all(failure_kind(b) is not None for b in baselines):
            first = own_reason(baselines[0].reason).splitlines()[0]
            cell.reason = (
                f"{cell.reason}; {BASELINE_OTHER} ({baselines[0].scenario}: "
                f"{baselines[0].outcome}: {first})"
            )
        return cell


def _combination(cell: Cell) -> tuple[str, ...]:
    """What a cell shares with its baseline cell: engine, table format and type, query type,
    variant."""
    return (cell.engine, cell.format, cell.table_type, cell.query_type, cell.variant)


def verdict(cell: Cell, outcome: Outcome, reason: str, evidence: Evidence) -> Cell:
    """The cell with its outcome, reason and evidence."""
    cell.outcome, cell.reason, cell.evidence = outcome, reason, evidence
    return cell


def writer_verdict(cell: Cell, written: WriteResult) -> Cell:
    """REJECTED when the writer refused the scenario's change, else ERROR: nothing to read."""
    sql = ";\n".join(written.sql or []) or None
    # The table's folder, which differs from run to run, as its name.
    message = (written.message or "").replace(str(written.table.path), written.table.name)
    said = stable_reason(without_run_names(message))
    if written.rejected:
        reason = f"the writer refused {written.failed_at}: {said}"
        return verdict(cell, Outcome.REJECTED, reason, Evidence(sql=sql, error=written.message))
    reason = f"the writer failed at {written.failed_at}: {said}"
    return verdict(cell, Outcome.ERROR, reason, Evidence(sql=sql, error=written.message))


def partitions_last(
    engine: Engine, partition_by: Sequence[str], shape: Shape = ALL
) -> tuple[str, ...]:
    """The partition columns the engine lists after the data columns in its answer, as Hive
    tables do: none for an engine that keeps the table's order, or a query naming its columns."""
    return tuple(partition_by) if engine.partition_columns_last and shape.every_column else ()


def in_engine_order(expected: pa.Table, last: Sequence[str]) -> pa.Table:
    """The oracle's table with the columns `last` moved after the others."""
    if not last:
        return expected
    names = expected.column_names
    return expected.select([n for n in names if n not in last] + [n for n in last if n in names])


def judge(
    cell: Cell,
    scenario: Scenario,
    table: TableRef,
    query_type: str,
    answer: pa.Table,
    sql: str,
    last: tuple[str, ...] = (),
    shape: Shape = ALL,
    plain: Cell | None = None,
) -> Cell:
    """PASS when the answer equals the oracle's table (in the query's shape), else WRONG with
    the differences; a filter's lost or extra rows are said in its words, beside `plain`, its
    table's `SELECT *` cell (`shape_reasons`)."""
    expected = expected_shape(
        scenario.spec, table.table_type, query_type, shape, table.appended, table.committed
    )
    if shape.counts:
        return _judge_count(cell, expected, answer, sql, shape, plain)
    if query_type == "changelog":
        compared = compare_changes(expected, answer, table.key)
    else:
        compared = compare(in_engine_order(expected, last), answer, table.key)
    if compared.equal:
        return verdict(cell, Outcome.PASS, "", Evidence(sql=sql))
    evidence = Evidence(sql=sql, sample=compared.sample)
    reasons = shape_reasons(compared, scenario, shape, expected.num_rows, table.key, plain)
    return verdict(cell, Outcome.WRONG, "; ".join(reasons), evidence)


def shape_reasons(
    compared: Comparison,
    scenario: Scenario,
    shape: Shape,
    matching: int,
    key: str,
    plain: Cell | None = None,
) -> list[str]:
    """The comparison's reasons, those about missing and extra rows of a filtered read said
    as what the filter did: how many of the matching rows it returned, whether `plain` (the
    table's `SELECT *` cell) reads the missing rows right (then they are rows lost without an
    error) or it repeats that read's defect, and whether they sit in files written before the
    column changed."""
    predicate = shape.predicate
    if predicate is None:
        return compared.reasons
    change = change_of(scenario.spec, shape)
    old = written_before(scenario.spec, change) if change is not None else set()
    said = []
    for reason, entries in compared.details:
        keys = [e[key] for e in entries if key in e]
        if reason.startswith("rows missing:"):
            returned = (
                f"the filter `{predicate.describe()}` returned {matching - len(keys)} of "
                f"{matching} matching rows"
            )
            text = beside_plain(returned, plain, predicate.column, keys)
            if change is not None:
                before = sum(1 for k in keys if k in old)
                some = "all" if before == len(keys) else f"{before} of the"
                text += (
                    f"; {some} {len(keys)} missing row(s) were written before "
                    f"{change.column} was {change.what}"
                )
            said.append(text)
        elif reason.startswith("rows extra:"):
            said.append(
                f"the filter `{predicate.describe()}` returned {len(keys)} row(s) that do not "
                f"match it ({key} {', '.join(map(str, keys[:5]))})"
            )
        else:
            said.append(reason)
    return said


def beside_plain(
    returned: str, plain: Cell | None, column: str, lost: Sequence[Any] | None = None
) -> str:
    """What a read that returned fewer rows than match did (`returned`: "the filter `...`
    returned 0 of 1 matching rows"), beside its table's `SELECT *` cell: rows lost without an
    error where that reads the rows of keys `lost` (None: not known) right, else that it
    repeats that read's defect; not compared where `SELECT *` was not read."""
    if plain is None:
        return f"{returned} (SELECT * of the table was not read, so it is not known whether "
        "the filter repeats its defect)"
    how = misread(plain, answer_column(column), lost)
    if how is None:
        return f"{ROWS_LOST}: {returned}"
    return f"{returned}{AS_PLAIN}{how}"


def _judge_count(
    cell: Cell,
    expected: pa.Table,
    answer: pa.Table,
    sql: str,
    shape: Shape,
    plain: Cell | None = None,
) -> Cell:
    """A count's cell: PASS when the engine counted the oracle's number of rows."""
    want = expected.column(COUNT_COLUMN)[0].as_py()
    names = [n for n in answer.column_names if n.lower() == COUNT_COLUMN]
    if answer.num_rows != 1 or not names:
        reason = f"the count came back as {answer.num_rows} row(s) of {answer.column_names}"
        return verdict(cell, Outcome.WRONG, reason, Evidence(sql=sql))
    got = answer.column(names[0])[0].as_py()
    if got == want:
        return verdict(cell, Outcome.PASS, "", Evidence(sql=sql))
    where = shape.predicate.describe() if shape.predicate else "every row"
    reason = f"count(*) WHERE {where} returned {got}; expected {want}"
    if got is not None and got < want and shape.predicate is not None:
        reason = beside_plain(reason, plain, shape.predicate.column)
    sample = [{"expected": want, "actual": got}]
    return verdict(cell, Outcome.WRONG, reason, Evidence(sql=sql, sample=sample))
