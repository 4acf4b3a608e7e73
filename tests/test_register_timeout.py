"""`--query-timeout` bounds one cell's read. Registering a table and the control check have a
bound of their own (the longer of the query timeout and `REGISTER_LIMIT`): a short query
timeout does not cut them short, and a hung one is still ended and the engine recovered."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.reading import reading
from lakecompat.engines.table import TableRef
from lakecompat.harness.run import fleet as fleet_module
from lakecompat.harness.run.control import CONTROL_ROWS, CONTROL_SCHEMA
from lakecompat.harness.run.fleet import EngineState, Fleet, register_timeout
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.writer.base import WriteResult

#: Longer than the query timeouts below, far shorter than any registration bound.
SLOW = 0.3


class SlowCatalog(Engine):
    """An engine whose catalog and reads take `delay` seconds, or hang until killed (None).

    Its answers are the control table's rows, so the control check judges them right."""

    name = "slow"
    readings = (reading("hudi", query_types={"cow": ("snapshot",)}, variants=(Variant("a"),)),)

    def __init__(self, context: RunContext, delay: float | None) -> None:
        super().__init__(context)
        self.delay = delay
        self.killed = threading.Event()
        self.restarts = 0

    @property
    def version(self) -> str:
        return "1"

    def start(self) -> None:
        pass

    def _wait(self) -> None:
        if self.delay is None:
            self.killed.wait(60)  # hung: only the watchdog's kill ends it
            raise RuntimeError("the connection was closed")
        time.sleep(self.delay)

    def register(self, table: TableRef) -> None:
        self._wait()

    def read_sql(self, table: TableRef, query_type: str) -> str:
        return f"SELECT * FROM {table.name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        self._wait()
        return pa.Table.from_pylist(CONTROL_ROWS, schema=CONTROL_SCHEMA.arrow())

    def kill(self) -> None:
        self.killed.set()

    def restart(self) -> None:
        self.restarts += 1
        self.killed.clear()


class HangingQuery(SlowCatalog):
    """Registers at once; its query hangs until killed."""

    def register(self, table: TableRef) -> None:
        pass


class ParquetWriter:
    """Gives the control table's reference; the test engines do not read files."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path

    def write_parquet(self, name: str, schema: Schema, rows: list[object], key: str) -> TableRef:
        return TableRef(name, self.tmp_path / name, "cow", key)


def _fleet(query_timeout: float) -> Fleet:
    return Fleet(Progress(quiet=True), query_timeout, threading.Event())


def _state(
    tmp_path: Path, delay: float | None, cls: type[SlowCatalog] = SlowCatalog
) -> EngineState:
    return EngineState(cls(RunContext(tmp_path, spark=None), delay))  # type: ignore[arg-type]


def _written(tmp_path: Path) -> WriteResult:
    return WriteResult(TableRef("t_cow", tmp_path / "t", "cow", "id"), sql=[])


def test_the_registration_bound_is_the_longer_of_the_query_timeout_and_the_limit() -> None:
    limit = fleet_module.REGISTER_LIMIT
    assert register_timeout(0.05) == limit
    assert register_timeout(limit * 3) == limit * 3
    assert register_timeout(0) == 0  # no limit stays no limit


def test_a_registration_slower_than_the_query_timeout_is_not_cut_short(tmp_path: Path) -> None:
    fleet, state = _fleet(SLOW / 6), _state(tmp_path, SLOW)
    assert fleet.register(state, _written(tmp_path)) is None
    assert not state.engine.killed.is_set() and state.engine.restarts == 0  # type: ignore[attr-defined]


def test_a_hung_registration_is_ended_and_the_engine_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fleet_module, "REGISTER_LIMIT", 0.2)
    fleet, state = _fleet(0.05), _state(tmp_path, None)
    reason = fleet.register(state, _written(tmp_path))
    assert reason == (
        "timeout after 0.2 s (the limit for registering a table and for the control check: "
        "the longer of --query-timeout and 0.2 s)"
    )
    assert state.engine.restarts == 1 and state.failure is None  # type: ignore[attr-defined]
    assert "registering a table: timeout after 0.2 s" in (tmp_path / "events.jsonl").read_text()


def test_the_control_check_is_not_bound_by_the_query_timeout(tmp_path: Path) -> None:
    fleet, state = _fleet(SLOW / 6), _state(tmp_path, SLOW)
    fleet.control_checks(ParquetWriter(tmp_path), [state])  # type: ignore[arg-type]
    assert state.failure is None


@pytest.mark.parametrize("cls", [SlowCatalog, HangingQuery], ids=["registration", "query"])
def test_a_hung_control_check_is_ended_and_fails_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cls: type[SlowCatalog]
) -> None:
    monkeypatch.setattr(fleet_module, "REGISTER_LIMIT", 0.2)
    fleet, state = _fleet(0.05), _state(tmp_path, None, cls)
    fleet.control_checks(ParquetWriter(tmp_path), [state])  # type: ignore[arg-type]
    assert state.failure == (
        "control check failed: timeout after 0.2 s (the limit for registering a table and for "
        "the control check: the longer of --query-timeout and 0.2 s)"
    )
    assert state.engine.killed.is_set()  # type: ignore[attr-defined]


class Recorded(SlowCatalog):
    """Records its registration in a shared log; its query waits at a barrier that only as
    many engines querying at the same time can pass."""

    def __init__(self, context: RunContext, log: list[str], barrier: threading.Barrier) -> None:
        super().__init__(context, 0)
        self.log, self.barrier = log, barrier

    def register(self, table: TableRef) -> None:
        self.log.append(f"{self.label} registering")
        time.sleep(0.05)  # another engine registering now would log in between
        self.log.append(f"{self.label} registered")

    def query(self, sql: str, variant: Variant) -> pa.Table:
        self.log.append(f"{self.label} querying")
        self.barrier.wait(timeout=10)  # broken (an error) unless both query at once
        return super().query(sql, variant)


def test_the_control_check_registers_in_turn_and_queries_at_the_same_time(
    tmp_path: Path,
) -> None:
    log: list[str] = []
    barrier = threading.Barrier(2)
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type]
    states = []
    for label in ("first", "second"):
        engine = Recorded(context, log, barrier)
        engine.label = label
        states.append(EngineState(engine))
    _fleet(0).control_checks(ParquetWriter(tmp_path), states)  # type: ignore[arg-type]
    assert [s.failure for s in states] == [None, None]
    assert log[:4] == [
        "first registering",
        "first registered",
        "second registering",
        "second registered",
    ]
    assert sorted(log[4:]) == ["first querying", "second querying"]
