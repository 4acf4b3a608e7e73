"""Known-outcome files: every kind of bad file is refused with its file and field, before
anything starts.

The bad files live in `tests/bad_expectations/`, one error each; CASES says what each must
report. Files too large to keep in the repository are generated.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lakecompat.engines import known_engines
from lakecompat.harness.cli import main
from lakecompat.harness.results.expectations import (
    ExpectationError,
    check_references,
    load_expectations,
)
from lakecompat.harness.scenario.input_files import MAX_FILE_BYTES
from lakecompat.harness.scenario.load import load_scenarios

TESTS = Path(__file__).resolve().parent
BAD = TESTS / "bad_expectations"
SCENARIOS = TESTS.parent / "scenarios"
ENTRY = "- {engine: spark, scenario: rename_column/rename, outcome: WRONG, reason: r"


def case(name: str, field: str, expected: str) -> object:
    return pytest.param(f"{name}.yaml", field, expected, id=name)


CASES = [
    case("malformed_yaml", "", "not valid YAML"),
    case("not_a_mapping", "", "expected a mapping with a list `known:`"),
    case("unknown_field", "known[0]", "unknown field 'colour'; known fields: engine, format, "),
    case("field_misspelt", "known[0]", "unknown field 'reson' (did you mean 'reason'?)"),
    case("unknown_outcome", "known[0].outcome", "Input should be 'PASS', 'WRONG'"),
    case("missing_reason", "known[0].reason", "Field required"),
    case("bad_version_range", "known[0].versions", "is not a version bound like '>=479'"),
    case("link_not_https", "known[0].link", "should match pattern '^https://"),
    case("engine_injection", "known[0].engine", "should match pattern"),
    case(
        "unknown_engine",
        "known[0].engine",
        "unknown engine 'sparkk'; known: daft, deltalake, duckdb, flink, hive, hudi-rs, polars, "
        "presto, pyiceberg, spark, trino",
    ),
    case("scenario_matches_nothing", "known[0].scenario", "'rename_colum/*' matches no scenario"),
    case("duplicate_entry", "known[1]", "matches the same cells as duplicate_entry.yaml known[0]"),
    case("any_engine_with_versions", "known[0].versions", "'versions' needs one engine"),
    case("table_type_unknown", "known[0].table_type", "Input should be 'cow', 'mor' or '*'"),
    # Entries of one cause: lists of values, versions per engine.
    case("list_engine_with_one_range", "known[0].versions", "a range speaks for one engine"),
    case(
        "versions_of_an_unlisted_engine",
        "known[0].versions",
        "names engine 'hive', which the entry's 'engine' does not list",
    ),
    case("versions_mapping_bad_range", "known[0].versions", "is not a version bound like"),
    case("list_unknown_engine", "known[0].engine", "unknown engine 'sparkk'; known: daft"),
    case("list_scenario_matches_nothing", "known[0].scenario", "'rename_colum/*' matches no"),
    case(
        "variant_matches_nothing",
        "known[0].variant",
        "'colum_positions' matches no variant of the engines and formats it names",
    ),
    case("list_empty", "known[0].table_type", "an empty list matches nothing"),
    case("list_with_star", "known[0].query_type", "'*' matches every value already"),
    case("list_table_type_unknown", "known[0].table_type", "Input should be 'cow', 'mor' or '*'"),
    case("list_shape_unknown", "known[0].shape", "Input should be 'all', 'project', 'filter'"),
    # Entries of one cause with several cases: each case says which cells, the entry why.
    case("cases_not_a_list", "known[0].cases", "a list of cases expected"),
    case("case_gives_what_is_said", "known[0].cases[1].reason", "a case gives only which cells"),
    case("case_field_given_twice", "known[0].cases[1].scenario", "given by the entry too"),
    case("case_table_type_unknown", "known[0].cases[1].table_type", "Input should be 'cow'"),
    case("case_scenario_matches_nothing", "known[0].cases[1].scenario", "matches no scenario"),
    case("list_value_twice", "known[0].engine", "lists 'spark' twice"),
]


def refuse(folder: Path) -> ExpectationError:
    """The error loading and checking `folder` against the project's scenarios raises."""
    with pytest.raises(ExpectationError) as caught:
        entries = load_expectations(folder)
        ids = [s.id for s in load_scenarios(SCENARIOS)]
        check_references(entries, ids, known_engines())
    return caught.value


def alone(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / "expectations"
    folder.mkdir()
    shutil.copy(BAD / name, folder / name)
    return folder / name


@pytest.mark.parametrize(("filename", "field", "expected"), CASES)
def test_bad_file_is_refused_with_file_and_field(
    filename: str, field: str, expected: str, tmp_path: Path
) -> None:
    path = alone(filename, tmp_path)
    error = refuse(path.parent)
    assert (error.path, error.field) == (path, field)
    assert str(error).startswith(f"{path}: {field}: " if field else f"{path}: "), str(error)
    assert expected in str(error)


def test_every_corpus_file_has_a_case() -> None:
    assert {p.values[0] for p in CASES} == {p.name for p in BAD.glob("*.yaml")}


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("known:\n" + ENTRY + ", note: '" + "x" * MAX_FILE_BYTES + "'}\n")
    error = refuse(tmp_path)
    assert error.path == path and "the limit is 2 MiB" in str(error)


def test_more_than_ten_thousand_entries_are_refused(tmp_path: Path) -> None:
    lines = [f"{ENTRY}, variant: v{n}}}" for n in range(10_001)]
    (tmp_path / "many.yaml").write_text("known:\n" + "\n".join(lines) + "\n")
    error = refuse(tmp_path)
    assert error.field == "known" and "at most 10000 items" in str(error)


@pytest.mark.parametrize("filename", ["unknown_outcome.yaml", "scenario_matches_nothing.yaml"])
def test_a_run_with_a_bad_file_exits_2_and_starts_nothing(
    filename: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = alone(filename, tmp_path)
    reports = tmp_path / "reports"
    code = main(["run", "--expectations", str(path.parent), "--reports", str(reports)])
    assert code == 2
    assert f"lakecompat: error: {path}: known[0]." in capsys.readouterr().err
    assert not reports.exists()  # no run folder: nothing was written, nothing started
