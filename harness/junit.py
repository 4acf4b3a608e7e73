"""JUnit XML from a run's cells, for CI systems: one test case per cell.

Test ids are stable across runs and versions: `engine.table_type.query_type.scenario[variant]`.
`WRONG` is a failure; `ERROR` and `ENGINE_FAILED` are errors; `REJECTED` and `UNSUPPORTED` are
results rather than test verdicts and are reported as skipped, with their reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from harness.outcomes import Cell, Outcome

SKIPPED = (Outcome.REJECTED, Outcome.UNSUPPORTED)
ERRORS = (Outcome.ERROR, Outcome.ENGINE_FAILED)


def case_id(cell: Cell) -> str:
    """The stable id of a cell's test case."""
    return f"{cell.engine}.{cell.table_type}.{cell.query_type}.{cell.scenario}[{cell.variant}]"


def render_junit(cells: list[Cell], run_id: str) -> str:
    """The JUnit XML document: one suite per engine, one case per cell."""
    suites = ET.Element("testsuites", name=f"lakecompat {run_id}")
    by_engine: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        by_engine[cell.engine].append(cell)
    for engine, group in by_engine.items():
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=engine,
            tests=str(len(group)),
            failures=str(sum(c.outcome is Outcome.WRONG for c in group)),
            errors=str(sum(c.outcome in ERRORS for c in group)),
            skipped=str(sum(c.outcome in SKIPPED for c in group)),
            time=f"{sum(c.seconds for c in group):.3f}",
        )
        for cell in group:
            _case(suite, cell)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _case(suite: ET.Element, cell: Cell) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{cell.engine}.{cell.table_type}.{cell.query_type}",
        name=f"{cell.scenario}[{cell.variant}]",
        time=f"{cell.seconds:.3f}",
    )
    details = _details(cell)
    if cell.outcome is Outcome.WRONG:
        ET.SubElement(case, "failure", message=cell.reason, type="WRONG").text = details
    elif cell.outcome in ERRORS:
        ET.SubElement(case, "error", message=cell.reason, type=cell.outcome.value).text = details
    elif cell.outcome in SKIPPED:
        ET.SubElement(case, "skipped", message=f"{cell.outcome.value}: {cell.reason}")


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
