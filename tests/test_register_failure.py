"""A table that cannot be registered with an engine gives ERROR cells, in a run, in `explore`
and in `repro` alike: each reads through the same loop (`harness.run.cells`)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.reading import reading
from lakecompat.engines.shape import TRINO
from lakecompat.engines.table import TableRef
from lakecompat.harness.explore.lab import Lab
from lakecompat.harness.repro.reproduce import read_again
from lakecompat.harness.results.outcomes import Cell, Outcome
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
    "rows": [{"id": 1, "ts": 1}, {"id": 2, "ts": 2}],
    "steps": [{"op": "add_column", "column": {"name": "c", "type": "string"}}],
    "table_types": ["cow"],
}


class CatalogRefuses(Engine):
    """An engine whose catalog refuses every table; it would read the oracle's answer."""

    name = "refusing"
    dialect = TRINO
    readings = (
        reading(
            "hudi",
            query_types={"cow": ("snapshot", "incremental")},
            variants=(Variant("a"), Variant("b", {"x": "1"})),
        ),
    )
    reads = 0

    @property
    def version(self) -> str:
        return "1"

    def start(self) -> None:
        pass

    def register(self, table: TableRef) -> None:
        raise RuntimeError("the catalog refused the table")

    def read_sql(self, table: TableRef, query_type: str) -> str:
        return f"SELECT * FROM {table.name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        type(self).reads += 1
        raise AssertionError("a table that could not be registered must not be read")


def _written(tmp_path: Path) -> tuple[Scenario, WriteResult]:
    scenario = Scenario("explore/e1", Path(), ScenarioSpec.model_validate(SPEC))
    table = TableRef("t_explore_e1_cow", tmp_path / "t", "cow", "id")
    files = {"unmet": [], "files": []}
    return scenario, WriteResult(table, sql=[], files=files)


def _state(tmp_path: Path) -> tuple[Fleet, EngineState]:
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type] - no Spark is needed
    fleet = Fleet(Progress(quiet=True), 30, threading.Event())
    return fleet, EngineState(CatalogRefuses(context))


def _all_errors(found: list[Cell]) -> None:
    assert found, "no cell was measured"
    for cell in found:
        assert cell.outcome is Outcome.ERROR, (cell.query_type, cell.variant, cell.outcome)
        assert (
            cell.reason
            == "could not register the table: RuntimeError: the catalog refused the table"
        )
    assert CatalogRefuses.reads == 0


def test_a_run_reads_a_table_that_failed_to_register_as_error(tmp_path: Path) -> None:
    scenario, written = _written(tmp_path)
    fleet, state = _state(tmp_path)
    error = fleet.register(state, written)
    found = list(cells.read_table(fleet, scenario, written, state, {"hudi": "x"}, error))
    assert [(c.query_type, c.variant, c.shape) for c in found] == [
        ("snapshot", "a", "all"),
        ("snapshot", "b", "all"),
        ("incremental", "a", "all"),
        ("incremental", "b", "all"),
        ("time_travel", "a", "all"),
        ("time_travel", "b", "all"),
        # the query shapes of the added column, on the default variant's snapshot
        ("snapshot", "a", "project"),
        ("snapshot", "a", "filter"),
    ]
    # time travel: the engine has none, which a failed registration does not change
    _all_errors([c for c in found if c.query_type != "time_travel"])
    assert {c.outcome for c in found if c.query_type == "time_travel"} == {Outcome.UNSUPPORTED}


def test_explore_reads_a_table_that_failed_to_register_as_error(tmp_path: Path) -> None:
    _, written = _written(tmp_path)

    class Writer:
        versions: ClassVar[dict[str, str]] = {"hudi": "x"}

        def write(self, scenario: Scenario, table_type: str) -> WriteResult:
            return written

    lab = Lab(tmp_path, ("refusing",), Progress(quiet=True), 30)
    lab.fleet, state = _state(tmp_path)
    lab.states, lab.writer = [state], Writer()  # type: ignore[assignment] - the lab's parts
    found = lab.cells(SPEC)
    _all_errors([c for c in found if c.query_type != "time_travel"])


def test_repro_reads_a_table_that_failed_to_register_as_error(tmp_path: Path) -> None:
    scenario, written = _written(tmp_path)
    fleet, state = _state(tmp_path)
    recorded: dict[str, Any] = {
        "scenario": scenario.id,
        "category": "explore",
        "title": "",
        "table_type": "cow",
        "query_type": "snapshot",
        "engine": "refusing",
        "engine_version": "1",
        "variant": "b",
        "settings": {"x": "1"},
        "writer": {"hudi": "x"},
        "outcome": Outcome.WRONG,
    }
    again = read_again(fleet, scenario, written, state, Cell(**recorded), {"hudi": "x"})
    _all_errors([again])
