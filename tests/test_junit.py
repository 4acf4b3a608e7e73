"""JUnit XML: one test case per cell, stable ids, outcomes mapped to failure/error/skipped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from test_results_report import INFO, cell, render, wrong

from lakecompat.harness.report.junit import case_id, render_junit
from lakecompat.harness.results.expectations import Known, judge
from lakecompat.harness.results.outcomes import Cell, Evidence, Outcome


def parse(cells: list[Cell], known: list[Known] | None = None) -> ET.Element:
    return ET.fromstring(render_junit(judge(cells, known or []), "run-1"))


def known(scenario: str, outcome: str, reason: str = "known reason") -> Known:
    return Known.model_validate(
        {"engine": "spark", "scenario": scenario, "outcome": outcome, "reason": reason}
    )


def test_case_ids_are_stable_and_name_every_key_part() -> None:
    one = cell(table_type="mor", query_type="read_optimized", variant="v1")
    assert case_id(one) == "spark.mor.read_optimized.add_column/after[v1]"


def test_regressions_fail_and_known_outcomes_are_skipped_with_their_reason() -> None:
    cells = [
        cell(),
        wrong(),
        cell(outcome=Outcome.ERROR, reason="boom", evidence=Evidence(error="boom")),
        cell(outcome=Outcome.ENGINE_FAILED, reason="control failed", evidence=Evidence(log="x")),
        cell(outcome=Outcome.REJECTED, reason="the writer refused FIRST"),
        cell(scenario="b/unsupported", outcome=Outcome.UNSUPPORTED, reason="no such query"),
        cell(scenario="c/known", outcome=Outcome.WRONG, reason="NULLs"),
        cell(scenario="d/fixed"),
    ]
    entries = [
        known("b/*", "UNSUPPORTED", "Spark has no such query"),
        known("c/*", "WRONG", "renamed columns read NULL"),
        known("d/*", "ERROR", "used to fail"),
    ]
    suite = parse(cells, entries).find("testsuite")
    assert suite is not None
    counts = [suite.get(k) for k in ("tests", "failures", "errors", "skipped")]
    # failures: the unknown WRONG and REJECTED; errors: ERROR and ENGINE_FAILED
    assert counts == ["8", "2", "2", "2"]
    cases = suite.findall("testcase")
    assert cases[0].find("*") is None  # a pass has no child element
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "WRONG (expected PASS): `name` read by position"
    assert "SELECT * FROM add_column_after_mor_ro" in (failure.text or "")
    assert cases[2].find("error") is not None and cases[3].find("error") is not None
    assert cases[4].find("failure") is not None  # an unknown REJECTED is a regression
    skipped = [c.find("skipped") for c in cases[5:7]]
    assert [s.get("message") for s in skipped if s is not None] == [
        "known UNSUPPORTED: Spark has no such query",
        "known WRONG: renamed columns read NULL",
    ]
    note = cases[7].find("system-out")
    assert note is not None and "fixed upstream: known ERROR" in (note.text or "")
    assert cases[0].get("classname") == "spark.cow.snapshot"
    assert cases[0].get("name") == "add_column/after[default]"


def test_one_suite_per_engine() -> None:
    root = parse([cell(), cell(engine="hive"), cell(engine="trino"), cell(engine="hive")])
    assert [s.get("name") for s in root.findall("testsuite")] == ["spark", "hive", "trino"]


def test_reports_include_junit_next_to_the_matrix(tmp_path: Path) -> None:
    render(tmp_path)
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    assert root.get("name") == f"lakecompat {INFO['run_id']}"
    assert sum(int(s.get("tests", "0")) for s in root) == 6


def test_every_cell_of_a_table_is_a_case_of_its_own() -> None:
    """A table's SELECT *, project and filter cells (and a filter's control variant) are
    cases with ids of their own; SELECT * keeps the id it always had."""
    cells = [
        cell(),
        cell(shape="project"),
        cell(shape="filter"),
        cell(shape="filter", variant="default+pushdown_off"),
        cell(format="iceberg", shape="filter"),
    ]
    cases = parse(cells).findall("testsuite/testcase")
    ids = [f"{c.get('classname')}.{c.get('name')}" for c in cases]
    assert ids == [case_id(c) for c in cells]
    assert ids == [
        "spark.cow.snapshot.add_column/after[default]",
        "spark.cow.snapshot.project.add_column/after[default]",
        "spark.cow.snapshot.filter.add_column/after[default]",
        "spark.cow.snapshot.filter.add_column/after[default+pushdown_off]",
        "spark.iceberg.cow.snapshot.filter.add_column/after[default]",
    ]
