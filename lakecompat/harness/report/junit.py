"""JUnit XML from a run's cells, for CI systems: one test case per cell.

Test ids are stable across runs and versions: `engine.table_type.query_type.scenario[variant]`,
the shape after the query type for a query shape other than `SELECT *` (`case_id`).
A cell with its known outcome (expectations/) is skipped, with the known reason. Any other cell
that does not pass is a regression: `WRONG`, `REJECTED` and `UNSUPPORTED` are failures, `ERROR`
is an error. `ENGINE_FAILED` is always an error. A known failure that now passes passes, with a
note in its output.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from lakecompat.harness.results.expectations import Judged, Verdict
from lakecompat.harness.results.outcomes import Cell, Outcome, table_kind


def case_id(cell: Cell) -> str:
    """The stable id of a cell's test case: `engine.table_type.query_type.scenario[variant]`,
    with the shape after the query type where it is not `all`
    (`trino.cow.snapshot.filter.type_change/int_to_long[column_names]`) and the table format
    before the table type where it is not Hudi (`spark.iceberg.cow.snapshot...`): its
    `<testcase>`'s class and name, joined by a dot."""
    return f"{case_class(cell)}.{cell.scenario}[{cell.variant}]"


def case_class(cell: Cell) -> str:
    """A cell's `<testcase>` class: `engine.table_type.query_type`, with the shape after the
    query type where it is not `all` (so that a table's `SELECT *`, `project` and `filter`
    cells, which share a name, are cases of their own) and the table format before the table
    type where it is not Hudi."""
    query = cell.query_type if cell.shape == "all" else f"{cell.query_type}.{cell.shape}"
    return f"{cell.engine}.{table_kind(cell.format, cell.table_type, '.')}.{query}"


def status(row: Judged) -> str:
    """`passed`, `failure`, `error` or `skipped`: what the cell's test case reports."""
    outcome = row.cell.outcome
    if outcome is Outcome.ENGINE_FAILED or (
        outcome is Outcome.ERROR and row.verdict is Verdict.REGRESSION
    ):
        return "error"
    if row.verdict is Verdict.REGRESSION:
        return "failure"
    return "skipped" if outcome is not Outcome.PASS else "passed"


def render_junit(judged: list[Judged], run_id: str) -> str:
    """The JUnit XML document: one suite per engine, one case per cell."""
    suites = ET.Element("testsuites", name=f"lakecompat {run_id}")
    by_engine: dict[str, list[Judged]] = defaultdict(list)
    for row in judged:
        by_engine[row.cell.engine].append(row)
    for engine, group in by_engine.items():
        statuses = [status(row) for row in group]
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=engine,
            tests=str(len(group)),
            failures=str(statuses.count("failure")),
            errors=str(statuses.count("error")),
            skipped=str(statuses.count("skipped")),
            time=f"{sum(r.cell.seconds for r in group):.3f}",
        )
        for row, state in zip(group, statuses, strict=True):
            _case(suite, row, state)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def testcase_element(suite: ET.Element, cell: Cell, **attributes: str) -> ET.Element:
    """A cell's `<testcase>` in `suite`: class `case_class`, name `scenario[variant]` (the two
    make `case_id`, unique per cell)."""
    return ET.SubElement(
        suite,
        "testcase",
        classname=case_class(cell),
        name=f"{cell.scenario}[{cell.variant}]",
        **attributes,
    )


def _case(suite: ET.Element, row: Judged, state: str) -> None:
    cell = row.cell
    case = testcase_element(suite, cell, time=f"{cell.seconds:.3f}")
    if state in ("failure", "error"):
        message = f"{cell.outcome.value} (expected {row.expected.value}): {cell.reason}"
        ET.SubElement(case, state, message=message, type=cell.outcome.value).text = _details(cell)
    elif state == "skipped":
        known = row.known.reason if row.known else cell.reason
        ET.SubElement(case, "skipped", message=f"known {cell.outcome.value}: {known}")
    elif row.verdict is Verdict.FIXED_UPSTREAM and row.known:
        note = f"fixed upstream: known {row.known.outcome.value} ({row.known.reason}), now PASS"
        ET.SubElement(case, "system-out").text = note


def _details(cell: Cell) -> str:
    parts = []
    if cell.evidence.sql:
        parts.append(f"SQL:\n{cell.evidence.sql}")
    if cell.evidence.sample:
        parts.append("Diff sample:\n" + "\n".join(map(str, cell.evidence.sample)))
    if cell.evidence.error:
        parts.append(f"Error: {cell.evidence.error}")
    if cell.evidence.log:
        parts.append(f"Engine log:\n{cell.evidence.log}")
    return "\n\n".join(parts)
