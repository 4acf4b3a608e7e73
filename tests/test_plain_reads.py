"""A filter is judged beside its table's SELECT * read: it loses rows "without an error" only
where SELECT * reads those rows right; where SELECT * misreads or fails on them, the filter
repeats that defect, and says so. A resumed run judges it the same way."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest
from test_results_report import cell

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.reading import Reading
from lakecompat.engines.shape import ALL, PUSHDOWN_OFF, TRINO
from lakecompat.engines.table import TableRef
from lakecompat.harness.results.outcomes import ROWS_LOST, Cell, Evidence, Outcome
from lakecompat.harness.results.plain_reads import (
    MISSING_AS_PLAIN,
    MISSING_WHERE_PLAIN_FAILS,
    misread,
    missing_rows,
)
from lakecompat.harness.run import cells
from lakecompat.harness.run.fleet import EngineState, Fleet
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.scenario.model import Scenario, ScenarioSpec
from lakecompat.harness.scenario.shapes import expected_shape
from lakecompat.harness.writer.base import WriteResult

RENAME = {
    "title": "rename",
    "key": "id",
    "formats": {"hudi": {"ordering": "ts"}},
    "schema": [
        {"name": "id", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "ts", "type": "long"},
    ],
    "rows": [{"id": 1, "name": "apple", "ts": 1}, {"id": 2, "name": "banana", "ts": 1}],
    "steps": [
        {"op": "rename_column", "column": "name", "to": "product"},
        {"op": "upsert", "rows": [{"id": 3, "product": "cherry", "ts": 2}]},
    ],
    "table_types": ["cow"],
}
SCENARIO = Scenario("rename_column/r", Path(), ScenarioSpec.model_validate(RENAME))
RETURNED = "the filter `product = 'apple'` returned 0 of 1 matching rows"
BEFORE = "; all 1 missing row(s) were written before product was renamed from name"


class PlainReading(Reading):
    """One variant, and a pushdown-off control."""

    format = "hudi"
    query_types: ClassVar[dict[str, tuple[str, ...]]] = {"cow": ("snapshot",)}
    variants = (Variant("plain"),)

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        return Variant(variant.name + PUSHDOWN_OFF, {"pushdown": "off"})


class Renamed(Engine):
    """Reads the rename table: `SELECT *` reads the old rows' `product` as NULL where
    `nulls` is set (else right); a filter on `product` always misses the old row."""

    name = "renamed"
    dialect = TRINO
    readings = (PlainReading,)
    nulls: ClassVar[bool] = True
    queries: ClassVar[list[str]] = []

    @property
    def version(self) -> str:
        return "1"

    def start(self) -> None:
        pass

    def read_sql(self, table: TableRef, query_type: str) -> str:
        return f"SELECT * FROM {table.name}"

    def query(self, sql: str, variant: Variant) -> pa.Table:
        type(self).queries.append(sql)
        rows = expected_shape(SCENARIO.spec, "cow", "snapshot", ALL).to_pylist()
        if self.nulls:
            rows = [{**r, "product": None if r["id"] < 3 else r["product"]} for r in rows]
        if "WHERE" in sql:
            rows = [r for r in rows if r["product"] == "apple" and r["id"] != 1]
        schema = expected_shape(SCENARIO.spec, "cow", "snapshot", ALL).schema
        table = pa.Table.from_pylist(rows, schema=schema)
        return table.select(["id", "product"]) if '"product" FROM' in sql else table


def read(
    tmp_path: Path,
    nulls: bool,
    shapes: tuple[str, ...] = ("all", "project", "filter"),
    finished: dict[tuple[str, ...], Cell] | None = None,
) -> dict[tuple[str, str, str], Cell]:
    """The cells the fake engine measures on the rename table, by query type, shape and
    variant (`finished`: the cells a resumed run has, by key)."""
    Renamed.nulls = nulls
    written = WriteResult(TableRef("t_r_cow", tmp_path / "t", "cow", "id"), sql=[], files={})
    context = RunContext(tmp_path, spark=None)  # type: ignore[arg-type] - no Spark is needed
    fleet = Fleet(Progress(quiet=True), 30, threading.Event())
    done = finished or {}
    found = cells.read_table(
        fleet,
        SCENARIO,
        written,
        EngineState(Renamed(context)),
        {"hudi": "x"},
        None,
        finished=lambda r: done.get(r.key("renamed", "cow", SCENARIO.id, "hudi")),
        shapes=shapes,
    )
    return {(c.query_type, c.shape, c.variant): c for c in found}


def test_a_filter_that_repeats_select_stars_defect_says_so(tmp_path: Path) -> None:
    found = read(tmp_path, nulls=True)
    assert found[("snapshot", "all", "plain")].reason.startswith("NULLs where values were expected")
    for variant in ("plain", "plain+pushdown_off"):
        shaped = found[("snapshot", "filter", variant)]
        assert shaped.outcome is Outcome.WRONG
        assert shaped.reason == (
            f"{RETURNED}, as SELECT * reads `product` NULL for those rows{BEFORE}"
        )


def test_a_filter_whose_select_star_reads_right_loses_rows_without_an_error(
    tmp_path: Path,
) -> None:
    found = read(tmp_path, nulls=False)
    assert found[("snapshot", "all", "plain")].outcome is Outcome.PASS
    assert found[("snapshot", "filter", "plain")].reason == f"{ROWS_LOST}: {RETURNED}{BEFORE}"


def test_a_resumed_run_judges_a_filter_beside_the_select_star_cell_it_has(
    tmp_path: Path,
) -> None:
    first = read(tmp_path, nulls=True)
    # The run stopped after SELECT * and the projection: the filters are read on resuming.
    kept = {c.key: c for c in first.values() if c.shape != "filter"}
    Renamed.queries.clear()
    again = read(tmp_path, nulls=True, finished=kept)
    assert set(again) == {("snapshot", "filter", v) for v in ("plain", "plain+pushdown_off")}
    assert all("WHERE" in sql for sql in Renamed.queries)  # SELECT * was not read again
    for variant in ("plain", "plain+pushdown_off"):
        filters = ("snapshot", "filter", variant)
        assert again[filters].reason == first[filters].reason


def test_a_filter_read_without_select_star_is_not_said_to_lose_rows(tmp_path: Path) -> None:
    found = read(tmp_path, nulls=False, shapes=("filter",))
    reason = found[("snapshot", "filter", "plain")].reason
    assert not reason.startswith(ROWS_LOST)
    assert reason.startswith(f"{RETURNED} (SELECT * of the table was not read")


def plain_wrong(column: str, sample: list[dict[str, Any]], share: str = "2 of 3 rows") -> Cell:
    reason = f"NULLs where values were expected in `{column}` ({share})"
    return cell(outcome=Outcome.WRONG, reason=reason, evidence=Evidence(sample=sample))


@pytest.mark.parametrize(
    ("plain", "how"),
    [
        (cell(), None),
        (
            cell(outcome=Outcome.ERROR, reason="QueryError: Cannot inspect NullWritable\nat x"),
            "fails on the same table (QueryError: Cannot inspect NullWritable)",
        ),
        (
            plain_wrong(
                "product", [{"id": 1, "column": "product", "expected": "a", "actual": None}]
            ),
            "reads `product` NULL for those rows",
        ),
        (
            plain_wrong("qty", [{"id": 1, "column": "qty", "expected": None, "actual": 5}]),
            "reads other values in `qty` for those rows",
        ),
        # SELECT * is wrong about another column: the filter's rows are its own loss
        (plain_wrong("other", [{"id": 1, "column": "other", "expected": 1, "actual": None}]), None),
        # ... or about other rows of the column (its sample holds every difference)
        (
            plain_wrong("product", [{"id": 2, "column": "product", "expected": 1, "actual": None}]),
            None,
        ),
        (
            cell(
                outcome=Outcome.WRONG,
                reason="rows missing: 1 of 3",
                evidence=Evidence(sample=[{"id": 1}]),
            ),
            "misses those rows too",
        ),
        # a full sample may leave rows out: the column is all there is to go by
        (
            plain_wrong(
                "product",
                [
                    {"id": n, "column": "product", "expected": 1, "actual": None}
                    for n in range(2, 10)
                ],
                "8 of 9 rows",
            ),
            "misreads the same table (NULLs where values were expected in `product` (8 of 9 rows))",
        ),
    ],
)
def test_how_select_star_misreads_the_rows_a_filter_missed(plain: Cell, how: str | None) -> None:
    assert misread(plain, "product" if "qty" not in plain.reason else "qty", [1]) == how


def test_reports_judge_old_rows_lost_reasons_beside_select_star_again() -> None:
    """Results written before filters were judged beside SELECT * say "rows lost" of filters
    that repeat SELECT *'s defect: the reports count those as SELECT *'s."""
    old = f"{ROWS_LOST}: {RETURNED}{BEFORE}"
    shaped = cell(
        shape="filter", outcome=Outcome.WRONG, reason=old, evidence=Evidence(sample=[{"id": 1}])
    )
    nulls = plain_wrong(
        "product", [{"id": 1, "column": "product", "expected": "a", "actual": None}]
    )
    failing = cell(outcome=Outcome.ERROR, reason="QueryError: NullWritable")
    assert missing_rows(shaped, cell()) == ROWS_LOST
    assert missing_rows(shaped, None) == ROWS_LOST
    assert missing_rows(shaped, nulls) == MISSING_AS_PLAIN
    assert missing_rows(shaped, failing) == MISSING_WHERE_PLAIN_FAILS
    new = f"{RETURNED}, as SELECT * reads `product` NULL for those rows{BEFORE}"
    assert missing_rows(cell(shape="filter", reason=new), nulls) == MISSING_AS_PLAIN
    assert missing_rows(cell(shape="filter", reason="wrong values in `v`"), nulls) is None
