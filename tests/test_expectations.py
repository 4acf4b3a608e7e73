"""Known outcomes: validation with file-and-field errors, matching, verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_results_report import cell

from harness.expectations import (
    ExpectationError,
    Known,
    Verdict,
    in_range,
    judge,
    load_expectations,
)
from harness.outcomes import Outcome


def known(**fields: object) -> Known:
    base = {"engine": "spark", "scenario": "add_column/*", "outcome": "WRONG", "reason": "r"}
    return Known.model_validate({**base, **fields})


@pytest.mark.parametrize(
    ("version", "bounds", "holds"),
    [
        ("483", ">=479", True),
        ("476", ">=479", False),
        ("3.5.9", ">=3.5,<3.6", True),
        ("3.6.0", ">=3.5,<3.6", False),
        ("4.0.1", "", True),
        ("4.0.1", "==4.0.1", True),
    ],
)
def test_version_ranges(version: str, bounds: str, holds: bool) -> None:
    assert in_range(version, bounds) is holds


def test_entries_match_by_every_key_part() -> None:
    entry = known(table_type="mor", query_type="read_optimized", variant="schema_on_read*")
    assert entry.matches(
        cell(table_type="mor", query_type="read_optimized", variant="schema_on_read_off")
    )
    assert not entry.matches(cell(table_type="cow", variant="schema_on_read"))
    assert not entry.matches(cell(table_type="mor", query_type="read_optimized", variant="x"))
    assert not known(versions=">=4").matches(cell())  # engine version 3.5.9


def test_verdicts() -> None:
    failing = cell(outcome=Outcome.WRONG, reason="x")
    rows = judge(
        [cell(), failing, cell(engine="hive"), cell(engine="hive", outcome=Outcome.ERROR)],
        [known(), known(engine="hive", outcome="WRONG")],
    )
    assert [r.verdict for r in rows] == [
        Verdict.FIXED_UPSTREAM,  # known WRONG, now PASS
        Verdict.AS_EXPECTED,
        Verdict.FIXED_UPSTREAM,
        Verdict.CHANGED,  # known WRONG, now ERROR
    ]
    unknown = judge([failing], [])
    assert unknown[0].verdict is Verdict.REGRESSION and unknown[0].expected is Outcome.PASS


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("known: [{engine: spark}]", "known[0].scenario", "Field required"),
        (
            "known: [{engine: spark, scenario: a, outcome: MAYBE, reason: r}]",
            "known[0].outcome",
            "Input should be",
        ),
        (
            "known: [{engine: spark, scenario: a, outcome: WRONG, reason: r, versions: 'about 4'}]",
            "known[0].versions",
            "is not a version bound",
        ),
        (
            "known: [{engine: spark, scenario: a, outcome: WRONG, reason: r, link: 'ftp://x'}]",
            "known[0].link",
            "should match pattern",
        ),
        ("known: [", "", "not valid YAML"),
        ("- just a list", "", "expected a mapping"),
        ("known: []\nextra: 1", "extra", "Extra inputs are not permitted"),
    ],
)
def test_bad_files_name_file_and_field(tmp_path: Path, text: str, field: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ExpectationError) as caught:
        load_expectations(tmp_path)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert str(tmp_path / "bad.yaml") in str(caught.value)


def test_files_load_in_order_and_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert load_expectations(tmp_path / "none") == []
    (tmp_path / "b.yaml").write_text(
        "known: [{engine: hive, scenario: x, outcome: ERROR, reason: r}]"
    )
    (tmp_path / "a.yaml").write_text(
        "known: [{engine: spark, scenario: y, outcome: WRONG, reason: r}]"
    )
    assert [k.engine for k in load_expectations(tmp_path)] == ["spark", "hive"]
