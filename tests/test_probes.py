"""A query type an engine lacks but whose table it can read is probed in its default variant
only: the cell is UNSUPPORTED whatever the table reads as, so the other variants do not read."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar

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
    "title": "unchanged",
    "key": "id",
    "formats": {"hudi": {"ordering": "ts"}},
    "schema": [{"name": "id", "type": "int"}, {"name": "ts", "type": "long"}],
    "rows": [{"id": 1, "ts": 1}],
    "steps": [],
    "table_types": ["cow"],
}


class NoTimeTravel(Engine):
    """Snapshot only; time travel is a probe. Every read fails, and is counted per variant."""

    name = "probing"
    dialect = TRINO
    readings = (
        reading(
            "hudi",
            query_types={"cow": ("snapshot",)},
            probe_only={("cow", "time_travel"): "no time travel"},
            variants=(Variant("plain"), Variant("other", {"x": "1"}), Variant("third", {"x": "2"})),
        ),
    )
    reads: ClassVar[list[tuple[str, str]]] = []

    @property
    def version(self) -> str:
        return "1"

    def start(self) -> None:
        pass

    def register(self, table: TableRef) -> None:
        pass

    def read_sql(self, table: TableRef, query_type: str) -> str:
        return f"SELECT * FROM {table.name} -- {query_type}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        type(self).reads.append((sql.rsplit(" ", 1)[-1], variant.name))
        raise RuntimeError("the read failed")


def test_only_the_default_variant_reads_a_probed_query_type(tmp_path: Path) -> None:
    scenario = Scenario("baseline/b", Path(), ScenarioSpec.model_validate(SPEC))
    written = WriteResult(
        TableRef("t_b_cow", tmp_path / "t", "cow", "id"), sql=[], files={"files": []}
    )
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type] - no Spark is needed
    fleet = Fleet(Progress(quiet=True), 30, threading.Event())
    state = EngineState(NoTimeTravel(context))
    found = list(cells.read_table(fleet, scenario, written, state, {"hudi": "x"}, None))
    travel = {c.variant: c for c in found if c.query_type == "time_travel"}
    assert set(travel) == {"plain", "other", "third"}
    assert {c.outcome for c in travel.values()} == {Outcome.UNSUPPORTED}
    # The default variant reads the table anyway, and says what that gave.
    assert travel["plain"].reason.startswith("no time travel; reading the table anyway failed")
    assert travel["plain"].evidence.error
    # The others point to it, without reading.
    for name in ("other", "third"):
        assert travel[name].reason == "no time travel; read anyway in the plain variant only"
        assert not travel[name].evidence.sql
    assert [r for r in NoTimeTravel.reads if r[0] == "time_travel"] == [("time_travel", "plain")]
    # Snapshot, a query type it has, is read in every variant.
    assert {v for q, v in NoTimeTravel.reads if q == "snapshot"} == {"plain", "other", "third"}


class Incremental(NoTimeTravel):
    """Reads Iceberg tables, incremental included; every read fails."""

    name = "ranges"
    readings = (
        reading(
            "iceberg",
            query_types={"cow": ("snapshot", "incremental")},
            variants=NoTimeTravel.readings[0].variants,
        ),
    )


def incremental_cells(tmp_path: Path, committed: tuple[int, ...]) -> dict[str, object]:
    scenario = Scenario("rename_column/r", Path(), ScenarioSpec.model_validate(SPEC))
    table = TableRef("t_r_cow", tmp_path / "t", "cow", "id", "iceberg", committed=committed)
    written = WriteResult(table, sql=[], files={"files": []})
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type] - no Spark is needed
    fleet = Fleet(Progress(quiet=True), 30, threading.Event())
    found = cells.read_table(fleet, scenario, written, EngineState(Incremental(context)), {}, None)
    return {c.variant: c for c in found if c.query_type == "incremental"}


def test_a_read_with_nothing_to_read_is_unsupported_with_what_reading_anyway_gave(
    tmp_path: Path,
) -> None:
    """A scenario that only changes an Iceberg table's schema commits no snapshot after the
    reference: its incremental read has no range to read, which says nothing of the change."""
    Incremental.reads.clear()
    empty = incremental_cells(tmp_path, committed=())
    assert {c.outcome for c in empty.values()} == {Outcome.UNSUPPORTED}
    assert empty["plain"].reason.startswith("nothing to read: no snapshot was committed")
    assert empty["plain"].reason.endswith(
        "reading the table anyway failed: RuntimeError: the read failed"
    )
    assert empty["other"].reason.endswith("read anyway in the plain variant only")
    assert [v for q, v in Incremental.reads if q == "incremental"] == ["plain"]
    # With a snapshot after the reference, the read is a read like any other.
    written = incremental_cells(tmp_path, committed=(1,))
    assert {c.outcome for c in written.values()} == {Outcome.ERROR}
