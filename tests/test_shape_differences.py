"""Where a query shape reads differently from SELECT *: the cells, by engine and cause."""

from __future__ import annotations

from test_results_report import cell

from lakecompat.harness.report.shape_differences import cause, differences, differences_markdown
from lakecompat.harness.results.outcomes import Outcome

LOST = (
    "rows lost without an error: the filter `v = 1.5` returned 0 of 1 matching rows; all 1 "
    "missing row(s) were written before v was changed from float to double"
)
CORRUPTED = (
    'QueryError: HUDI_BAD_DATA: Malformed Parquet file. Corrupted statistics for column "[v] '
    "optional float v\" (Trino's message names the first file that failed)"
)


def test_shaped_cells_whose_outcome_differs_are_listed_by_engine_and_cause() -> None:
    cells = [
        cell(engine="spark", variant="off"),  # SELECT * reads right ...
        cell(engine="spark", variant="off", shape="project"),
        # ... a filter loses rows, and reads right with pushdown off
        cell(engine="spark", variant="off", shape="filter", outcome=Outcome.WRONG, reason=LOST),
        cell(engine="spark", variant="off+pushdown_off", shape="filter"),
        cell(engine="trino", variant="column_names"),
        cell(
            engine="trino",
            variant="column_names",
            shape="filter",
            outcome=Outcome.ERROR,
            reason=CORRUPTED,
        ),
        # SELECT * fails; the projection (without the failing column) reads right
        cell(engine="hive", variant="x", outcome=Outcome.ERROR, reason="NullWritable"),
        cell(engine="hive", variant="x", shape="project"),
        # not read at all: not a difference
        cell(engine="hudi-rs", variant="v2"),
        cell(engine="hudi-rs", variant="v2", shape="filter", outcome=Outcome.UNSUPPORTED),
    ]
    found = differences(cells)
    assert [(d.cell.engine, d.cell.shape, d.cell.variant) for d in found] == [
        ("spark", "filter", "off"),
        ("trino", "filter", "column_names"),
        ("hive", "project", "x"),
    ]
    assert [cause(d.cell) for d in found] == [
        "rows lost without an error",
        "QueryError: HUDI_BAD_DATA: Malformed Parquet file. Corrupted statistics for column",
        "reads right",
    ]
    text = "\n".join(differences_markdown(cells))
    assert "## Where a query shape reads differently from SELECT *" in text
    assert "3 shaped cells differ" in text
    assert "### spark · Apache Hudi\n\n- **rows lost without an error** (1 cell):" in text
    assert "  - `add_column/after` (cow · filter · `off`): WRONG where SELECT * is PASS" in text
    assert differences_markdown(cells[:2]) == []


def test_a_shaped_cell_is_compared_with_select_star_of_its_own_table_format() -> None:
    """Daft cannot read Hudi 1.x tables but reads Iceberg's: its Iceberg filters are not
    different from its Hudi `SELECT *`."""
    cells = [
        cell(engine="daft", outcome=Outcome.ERROR, reason="unsupported table version"),
        cell(engine="daft", format="iceberg"),
        cell(engine="daft", format="iceberg", shape="filter"),
        cell(engine="daft", format="iceberg", shape="project", outcome=Outcome.WRONG, reason=LOST),
    ]
    found = differences(cells)
    assert [(d.cell.format, d.cell.shape) for d in found] == [("iceberg", "project")]
    text = "\n".join(differences_markdown(cells))
    assert "### daft · Apache Iceberg" in text


def test_engines_that_lose_rows_come_first() -> None:
    cells = [
        cell(engine="hive", variant="x", outcome=Outcome.ERROR, reason="NullWritable"),
        cell(engine="hive", variant="x", shape="project"),
        cell(engine="trino", variant="names"),
        cell(engine="trino", variant="names", shape="filter", outcome=Outcome.WRONG, reason=LOST),
    ]
    headings = [line for line in differences_markdown(cells) if line.startswith("### ")]
    assert headings == ["### trino · Apache Hudi", "### hive · Apache Hudi"]


def test_a_filter_that_repeats_a_failing_select_star_is_not_said_to_lose_rows() -> None:
    """Hive's SELECT * fails on an added column (NullWritable) while `IS NULL` returns none of
    the old rows: the filter's rows are missing where SELECT * fails, not lost of its own."""
    missing = (
        "rows lost without an error: the filter `color IS NULL` returned 0 of 3 matching rows; "
        "all 3 missing row(s) were written before color was added"
    )
    cells = [
        cell(engine="hive", variant="x", outcome=Outcome.ERROR, reason="QueryError: NullWritable"),
        cell(engine="hive", variant="x", shape="filter", outcome=Outcome.WRONG, reason=missing),
        cell(engine="trino", variant="names"),
        cell(engine="trino", variant="names", shape="filter", outcome=Outcome.WRONG, reason=LOST),
    ]
    found = differences(cells)
    assert [cause(d.cell, d.plain) for d in found] == [
        "rows missing where SELECT * fails",
        "rows lost without an error",
    ]
    text = "\n".join(differences_markdown(cells))
    assert "- **rows missing where SELECT * fails** (1 cell):" in text
    assert "### trino · Apache Hudi\n\n- **rows lost without an error** (1 cell):" in text


def test_a_scenario_read_under_two_variants_gets_a_line_for_each() -> None:
    """The shapes are read under the default and under each variant that matches columns
    otherwise: the same cause in two variants is two lines, each naming its variant."""
    cells = []
    for variant in ("column_names", "column_positions"):
        cells += [
            cell(engine="trino", variant=variant),
            cell(
                engine="trino",
                variant=variant,
                shape="filter",
                outcome=Outcome.ERROR,
                reason=CORRUPTED,
            ),
        ]
    text = "\n".join(differences_markdown(cells))
    for variant in ("column_names", "column_positions"):
        assert f"  - `add_column/after` (cow · filter · `{variant}`): ERROR where" in text
