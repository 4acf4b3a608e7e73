"""An engine that dies during a query is started again and asked once more: the cell gets
what the fresh engine answers, and only a query that kills the fresh engine too is recorded
as the engine's death (`harness.run.cells.measure`)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pyarrow as pa

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import TRINO
from lakecompat.engines.table import TableRef
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run import cells
from lakecompat.harness.run.fleet import EngineState, Fleet
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.scenario.model import Scenario, ScenarioSpec
from lakecompat.harness.writer.base import WriteResult

SPEC = {
    "title": "one column added",
    "key": "id",
    "formats": {"hudi": {"ordering": "ts"}},
    "schema": [{"name": "id", "type": "int"}, {"name": "ts", "type": "long"}],
    "rows": [{"id": 1, "ts": 1}],
    "steps": [{"op": "add_column", "column": {"name": "c", "type": "string"}}],
    "table_types": ["cow"],
}


class Dying(Engine):
    """An engine that dies on its first `deaths` queries (a fresh start does not help them),
    then fails each query with an error of the table's own."""

    name = "dying"
    dialect = TRINO
    readings = (reading("hudi", query_types={"cow": ("snapshot",)}, variants=(Variant("a"),)),)
    deaths = 1

    def __init__(self, context: RunContext) -> None:
        super().__init__(context)
        self.up, self.starts, self.queries = False, 0, 0

    @property
    def version(self) -> str:
        return "1"

    def start(self) -> None:
        self.up, self.starts = True, self.starts + 1

    def stop(self) -> None:
        self.up = False

    def alive(self) -> bool:
        return self.up

    def register(self, table: TableRef) -> None:
        pass

    def read_sql(self, table: TableRef, query_type: str) -> str:
        return f"SELECT * FROM {table.name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        self.queries += 1
        if self.queries <= self.deaths:
            self.up = False
            raise ConnectionError("the connection was reset")
        raise RuntimeError("the table's own failure")


def _measure(tmp_path: Path, deaths: int) -> tuple[Dying, list[dict[str, str]], cells.Cell]:
    scenario = Scenario("explore/e1", Path(), ScenarioSpec.model_validate(SPEC))
    table = TableRef("t_e1_cow", tmp_path / "t", "cow", "id")
    written = WriteResult(table, sql=[], files={"unmet": [], "files": []})
    engine = Dying(RunContext(tmp_path, spark=None))  # type: ignore[arg-type] - no Spark needed
    engine.deaths = deaths
    engine.start()
    fleet = Fleet(Progress(quiet=True), 30, threading.Event())
    state = EngineState(engine)
    cell = cells.measure(fleet, scenario, written, state, "snapshot", Variant("a"), {}, None)
    events_file = tmp_path / "events.jsonl"
    lines = events_file.read_text().splitlines() if events_file.exists() else []
    return engine, [json.loads(line) for line in lines], cell


def test_a_query_that_met_a_dying_engine_is_asked_again_on_a_fresh_one(tmp_path: Path) -> None:
    engine, events, cell = _measure(tmp_path, deaths=1)
    assert (engine.starts, engine.queries) == (2, 2)
    assert cell.outcome is Outcome.ERROR
    assert cell.reason == "RuntimeError: the table's own failure"
    assert [e["event"] for e in events] == ["restart", "asked_again"]
    assert events[1]["why"].startswith("dying died during the query: ConnectionError")
    assert events[1]["scenario"] == "explore/e1" and events[1]["variant"] == "a"


def test_a_query_that_kills_the_fresh_engine_too_is_the_engines_death(tmp_path: Path) -> None:
    engine, events, cell = _measure(tmp_path, deaths=2)
    assert (engine.starts, engine.queries) == (3, 2)  # restarted after each death, asked twice
    assert cell.outcome is Outcome.ERROR
    assert cell.reason == (
        "dying died during the query: ConnectionError: the connection was reset "
        "(also when asked again on a freshly started dying)"
    )
    assert [e["event"] for e in events] == ["restart", "restart"]
