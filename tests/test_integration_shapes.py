"""Integration: query shapes with real Spark and Trino. A filter on a column widened from float
to double reads the old file's statistics through the new type (Trino 483 rejects them unless
its pushdown is off), and a filter on a renamed column misses the rows SELECT * reads NULL."""

from __future__ import annotations

import pytest
from support import quiet_run

from lakecompat.harness.results.outcomes import ROWS_LOST, Cell, Outcome
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES

pytestmark = pytest.mark.integration
WIDENED = "type_change/float_to_double"
RENAMED = "rename_column/rename"


@pytest.fixture(scope="module")
def cells(tmp_path_factory: pytest.TempPathFactory) -> list[Cell]:
    reports = tmp_path_factory.mktemp("reports")
    _, found = quiet_run(reports, ("spark", "trino"), f"{WIDENED},{RENAMED}", shapes=DEFAULT_SHAPES)
    return found


def cell(cells: list[Cell], engine: str, scenario: str, shape: str, variant: str) -> Cell:
    (found,) = [
        c
        for c in cells
        if (c.engine, c.scenario, c.table_type, c.query_type, c.shape, c.variant)
        == (engine, scenario, "cow", "snapshot", shape, variant)
    ]
    return found


def test_a_filter_on_a_widened_column_with_its_evidence(cells: list[Cell]) -> None:
    # The old file holds v as float (1.5, and a NULL); the row written after the change
    # holds 2.5. The filter asks for 1.5, a value only the old file has.
    spark = cell(cells, "spark", WIDENED, "filter", "schema_on_read_off")
    assert spark.outcome is Outcome.PASS, spark.reason
    assert spark.evidence.sql is not None
    assert spark.evidence.sql.endswith(
        "SELECT * FROM `t_type_change_float_to_double_cow_snapshot` WHERE `v` = 1.5;"
    )
    # Spark's two controls each turn one path off: Parquet filter pushdown, data skipping.
    quiet = cell(cells, "spark", WIDENED, "filter", "schema_on_read_off+pushdown_off")
    assert quiet.outcome is Outcome.PASS, quiet.reason
    assert "SET spark.sql.parquet.filterPushdown=false;" in (quiet.evidence.sql or "")
    assert "hoodie.enable.data.skipping" not in quiet.settings
    unskipped = cell(cells, "spark", WIDENED, "filter", "schema_on_read_off+data_skipping_off")
    assert unskipped.outcome is Outcome.PASS, unskipped.reason
    assert "SET hoodie.enable.data.skipping=false;" in (unskipped.evidence.sql or "")
    assert "spark.sql.parquet.filterPushdown" not in unskipped.settings

    trino = cell(cells, "trino", WIDENED, "filter", "column_names")
    assert trino.outcome is Outcome.ERROR
    assert "Corrupted statistics for column" in trino.reason
    assert 'WHERE "v" = 1.5;' in (trino.evidence.sql or "")
    # With the statistics ignored (a catalog of its own), the same query reads right.
    ignored = cell(cells, "trino", WIDENED, "filter", "column_names+pushdown_off")
    assert ignored.outcome is Outcome.PASS, ignored.reason
    assert "USE hudi_pushdown_off." in (ignored.evidence.sql or "")
    assert "parquet.ignore-statistics=true" in (ignored.evidence.sql or "")

    project = cell(cells, "trino", WIDENED, "project", "column_names")
    assert project.outcome is Outcome.PASS, project.reason
    assert 'SELECT "id", "v" FROM' in (project.evidence.sql or "")


def test_a_filter_on_a_renamed_column_repeats_select_stars_nulls(cells: list[Cell]) -> None:
    """The engines' SELECT * reads the renamed column NULL in old rows, so the filter on it
    misses them: it repeats SELECT *'s defect, and does not lose rows of its own."""
    for engine, variant in (("spark", "schema_on_read_off"), ("trino", "column_names")):
        plain = cell(cells, engine, RENAMED, "all", variant)
        assert plain.outcome is Outcome.WRONG
        assert plain.reason.startswith("NULLs where values were expected in `product`")
        missing = cell(cells, engine, RENAMED, "filter", variant)
        assert missing.outcome is Outcome.WRONG
        assert missing.reason == (
            "the filter `product = 'apple'` returned 0 of 1 matching rows, as SELECT * reads "
            "`product` NULL for those rows; all 1 missing row(s) were written before product "
            "was renamed from name"
        )
        assert not missing.reason.startswith(ROWS_LOST)
    # Under Hudi's schema on read, a variant that matches old files' columns otherwise, the
    # shapes are read too: there SELECT *, the projection and the filter read the renamed
    # column right.
    for shape in ("all", "project", "filter"):
        read = cell(cells, "spark", RENAMED, shape, "schema_on_read")
        assert read.outcome is Outcome.PASS, (shape, read.reason)
    # The filter is read under that variant's controls too (pushdown off, data skipping off),
    # and reads right there as well.
    controls = {c.variant: c for c in cells if c.variant.startswith("schema_on_read+")}
    assert set(controls) == {"schema_on_read+pushdown_off", "schema_on_read+data_skipping_off"}
    assert all(c.shape == "filter" for c in controls.values())
    for name in controls:
        read = cell(cells, "spark", RENAMED, "filter", name)
        assert read.outcome is Outcome.PASS, (name, read.reason)


def test_only_changed_scenarios_have_shapes(cells: list[Cell]) -> None:
    baseline = [c for c in cells if c.scenario == "baseline/no_change"]
    assert baseline and {c.shape for c in baseline} == {"all"}
    shapes = {(c.engine, c.shape) for c in cells if c.scenario == WIDENED}
    assert shapes == {(e, s) for e in ("spark", "trino") for s in DEFAULT_SHAPES}
