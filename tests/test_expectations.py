"""Known outcomes: validation with file-and-field errors, matching, verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_results_report import cell

from lakecompat.engines import engine_class, known_engines
from lakecompat.harness.results.expectations import (
    ExpectationError,
    Known,
    Verdict,
    check_references,
    exit_status,
    from_records,
    in_range,
    judge,
    load_expectations,
    to_records,
)
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.scenario.load import load_scenarios


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


def test_an_entry_of_one_cause_matches_every_value_it_lists() -> None:
    entry = known(
        engine=["spark", "trino"],
        versions={"trino": ">=480"},
        scenario=["add_column/after", "rename_column/*"],
        table_type=["mor"],
        query_type=["snapshot", "read_optimized"],
        variant=["default", "column_*"],
        shape=["all", "filter"],
    )
    trino = {"engine": "trino", "engine_version": "483", "table_type": "mor"}
    assert entry.matches(cell(**trino, scenario="rename_column/rename", variant="column_names"))
    assert entry.matches(cell(table_type="mor", query_type="read_optimized", shape="filter"))
    assert entry.matches(cell(table_type="mor", engine_version="1.0"))  # spark: every version
    assert not entry.matches(cell(**{**trino, "engine_version": "476"}))  # trino below 480
    assert not entry.matches(cell(engine="hive", table_type="mor"))
    assert not entry.matches(cell(table_type="cow"))
    assert not entry.matches(cell(table_type="mor", scenario="add_column/first"))
    assert not entry.matches(cell(table_type="mor", query_type="incremental"))
    assert not entry.matches(cell(table_type="mor", variant="column_positions_x", shape="x"))
    assert not entry.matches(cell(table_type="mor", shape="project"))
    # As a file spells it: lists stay lists, and it loads back the same.
    written = entry.to_yaml_dict()
    assert written["engine"] == ["spark", "trino"] and written["versions"] == {"trino": ">=480"}
    assert Known.model_validate(written) == entry and hash(Known.model_validate(written))


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
        Verdict.REGRESSION,  # known WRONG, now ERROR: a failure of another kind
    ]
    unknown = judge([failing], [])
    assert unknown[0].verdict is Verdict.REGRESSION and unknown[0].expected is Outcome.PASS


def test_the_first_matching_entry_in_file_order_wins_whatever_it_names() -> None:
    entries = [
        known(engine="hive", outcome="ERROR"),
        known(engine="*", scenario="add_column/at_end", outcome="REJECTED", hudi=">=0.15"),
        known(engine="spark", scenario="add_*", outcome="WRONG"),
        known(engine="*", scenario="*", outcome="ERROR"),
        known(engine="spark", format="iceberg", outcome="UNSUPPORTED"),
    ]
    cells = [
        cell(scenario="add_column/at_end"),  # the '*' entry before the engine's own
        cell(scenario="add_column/first"),  # the engine's own before a later '*'
        cell(scenario="rename_column/rename"),  # only the last '*' entry
        cell(engine="hive", scenario="add_column/first"),
        cell(engine="trino", scenario="add_column/first"),
        cell(scenario="add_column/first", format="iceberg"),  # the others speak for Hudi
    ]
    found = [j.known for j in judge(cells, entries)]
    assert found == [entries[1], entries[2], entries[3], entries[0], entries[3], entries[4]]
    # the same as trying every entry on every cell
    assert found == [next((k for k in entries if k.matches(c)), None) for c in cells]


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
        (
            "known: [{engine: '*', scenario: a, outcome: REJECTED, reason: r, versions: '>=1'}]",
            "known[0].versions",
            "'versions' needs one engine",
        ),
        (
            "known: [{engine: spark, scenario: a, outcome: WRONG, reason: r, hudi: 'new'}]",
            "known[0].hudi",
            "is not a version bound",
        ),
        ("known: [", "", "not valid YAML"),
        ("- just a list", "", "expected a mapping"),
        ("known: []\nextra: 1", "", "unknown field 'extra'; known fields: known"),
    ],
)
def test_bad_files_name_file_and_field(tmp_path: Path, text: str, field: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(ExpectationError) as caught:
        load_expectations(tmp_path)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert str(tmp_path / "bad.yaml") in str(caught.value)


def test_files_load_in_order_and_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ExpectationError, match="no such folder"):
        load_expectations(tmp_path / "none")
    (tmp_path / "b.yaml").write_text(
        "known: [{engine: hive, scenario: x, outcome: ERROR, reason: r}]"
    )
    (tmp_path / "a.yaml").write_text(
        "known: [{engine: spark, scenario: y, outcome: WRONG, reason: r}]"
    )
    assert [k.engine for k in load_expectations(tmp_path)] == ["spark", "hive"]


def test_any_engine_and_hudi_versions() -> None:
    entry = known(engine="*", hudi=">=0.15,<1.0")
    assert entry.matches(cell(engine="trino"))  # the test cell was written by Hudi 0.15.0
    assert not known(engine="*", hudi=">=1.0").matches(cell(engine="trino"))


def test_a_scenario_glob_that_matches_nothing_names_file_and_entry(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(
        "known:\n- {engine: spark, scenario: add_column/*, outcome: WRONG, reason: r}\n"
        "- {engine: spark, scenario: add_colum/typo, outcome: WRONG, reason: r}\n"
    )
    entries = load_expectations(tmp_path)
    with pytest.raises(ExpectationError) as caught:
        check_references(entries, ["add_column/after", "baseline/no_change"], ["spark"])
    assert caught.value.field == "known[1].scenario"
    assert str(tmp_path / "k.yaml") in str(caught.value)
    check_references(entries[:1], ["add_column/after"], ["spark"])  # no error


def test_records_round_trip_with_their_source(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(
        "known: [{engine: spark, scenario: x, outcome: WRONG, reason: r, link: 'https://a/1'}]"
    )
    entries = load_expectations(tmp_path)
    records = to_records(entries, tmp_path)
    assert records[0]["source"] == "k.yaml#known[0]"
    assert [e.to_yaml_dict() for e in from_records(records)] == [e.to_yaml_dict() for e in entries]


def test_exit_status() -> None:
    passing = judge([cell()], [])
    regression = judge([cell(outcome=Outcome.WRONG)], [])
    fixed = judge([cell()], [known(scenario="*")])
    failed = judge([cell(outcome=Outcome.ENGINE_FAILED)], [known(outcome="ENGINE_FAILED")])
    assert [exit_status(j) for j in (passing, regression, fixed, failed)] == [0, 1, 0, 2]
    assert exit_status(fixed, strict=True) == 1


def test_the_shipped_expectations_are_valid_and_name_real_scenarios() -> None:
    root = Path(__file__).resolve().parent.parent
    entries = load_expectations(root / "expectations")
    assert entries, "expectations/ ships the known outcomes of the default matrix"
    scenario_ids = [s.id for s in load_scenarios(root / "scenarios")]
    check_references(entries, scenario_ids, known_engines())
    # A PASS entry only says that a cell known to fail elsewhere passes at one version point.
    assert all(e.releases or e.versions for e in entries if e.outcome is Outcome.PASS)


def test_reader_hudi_bounds_match_the_readers_own_jars() -> None:
    from test_results_report import cell

    from lakecompat.harness.results.expectations import Known
    from lakecompat.harness.results.outcomes import Outcome

    entry = Known(
        engine="hive",
        scenario="*",
        reader_hudi="<1.0",
        outcome=Outcome.ERROR,
        reason="old Hudi jars on HiveServer2",
    )
    old_jars = cell(engine="hive", engine_version="4.0.1", reader_hudi="0.15.0")
    new_jars = cell(engine="hive", engine_version="4.0.1", reader_hudi="1.2.0")
    no_jars = cell(engine="hive", engine_version="4.0.1")
    assert entry.matches(old_jars)
    assert not entry.matches(new_jars)
    assert not entry.matches(no_jars)


#: Where a table format's own defects and rules are written: its repositories and its site.
FORMAT_SOURCES = {
    "hudi": ("https://github.com/apache/hudi/", "https://hudi.apache.org/"),
    "iceberg": ("https://github.com/apache/iceberg/", "https://iceberg.apache.org/"),
    "delta": ("https://github.com/delta-io/delta/", "https://docs.delta.io/"),
}
ISSUE_LINK = re.compile(r"https://github\.com/([\w.-]+/[\w.-]+)/(issues|pull)/\d+")


def test_every_link_names_an_issue_of_the_project_the_entry_is_about() -> None:
    """A known outcome's link is an issue or pull request of its engine's project (the
    engine's `trackers`) or of its table format, or the format's own documentation: a link to
    another project's tracker sends a maintainer to the wrong place."""
    root = Path(__file__).resolve().parent.parent
    wrong = []
    for entry in load_expectations(root / "expectations"):
        if not entry.link:
            continue
        engines = known_engines() if entry.engine == "*" else entry.engine
        names = [engines] if isinstance(engines, str) else list(engines)
        formats = [entry.format] if entry.format else list(FORMAT_SOURCES)
        allowed = {f"https://github.com/{t}/" for n in names for t in engine_class(n).trackers}
        allowed |= {source for f in formats for source in FORMAT_SOURCES[f]}
        github = entry.link.startswith("https://github.com/")
        if (github and not ISSUE_LINK.fullmatch(entry.link)) or not any(
            entry.link.startswith(a) for a in allowed
        ):
            path, number = entry._source or (Path("?"), 0)
            wrong.append(f"{path.name} known[{number}] ({', '.join(names)}): {entry.link}")
    assert wrong == []


def test_every_engine_names_where_its_defects_are_filed() -> None:
    assert [n for n in known_engines() if not engine_class(n).trackers] == []


def test_an_entry_may_name_any_control_a_run_reads_a_filter_under() -> None:
    """Spark's filters of Hudi tables are also read with Hudi's data skipping off: an entry
    may name that control; Iceberg's filters have no controls, so naming one is a mistake."""
    control = known(variant="schema_on_read+data_skipping_off", shape="filter", format="hudi")
    check_references([control], ["add_column/after"], ["spark"])
    wrong = known(variant="default+data_skipping_off", shape="filter", format="iceberg")
    with pytest.raises(ExpectationError, match="variant"):
        check_references([wrong], ["add_column/after"], ["spark"])
