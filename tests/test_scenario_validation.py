"""Scenario loading: every kind of bad file is refused with its file, field path and expectation.

The bad files live in `tests/bad_scenarios/`, one error each; CASES says what each must report.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lakecompat.harness.scenario.load import ScenarioError, load_scenario, load_scenarios
from lakecompat.harness.scenario.model import MAX_ROWS
from lakecompat.harness.scenario.oracle import evolve

TESTS = Path(__file__).resolve().parent
BAD = TESTS / "bad_scenarios"
SCENARIOS = TESTS.parent / "scenarios"


def case(name: str, field: str, expected: str, *marks: pytest.MarkDecorator) -> object:
    """One corpus file, the field path its error must name and a fragment of the message."""
    return pytest.param(f"{name}.yaml", field, expected, id=name, marks=marks)


CASES = [
    case("malformed_yaml", "", "not valid YAML"),
    case("not_a_mapping", "", "expected a mapping with title, key, schema, rows, steps"),
    case("missing_title", "title", "Field required"),
    case("missing_key", "key", "Field required"),
    case("missing_schema", "schema", "Field required"),
    case("missing_rows", "rows", "Field required"),
    case(
        "unknown_top_level_field",
        "",
        "unknown field 'colour'; known fields: title, description, baseline, table_types, key, "
        "formats, precombine, partition_by, schema, rows, steps, needs",
    ),
    case(
        "top_level_field_misspelt", "", "unknown field 'preecombine' (did you mean 'precombine'?)"
    ),
    case("step_field_misspelt", "steps[0]", "unknown field 'too' (did you mean 'to'?)"),
    case(
        "column_field_misspelt", "steps[0].schema[1]", "unknown field 'typ' (did you mean 'type'?)"
    ),
    case("unknown_step_op", "steps[1]", "expected tags: 'insert', 'upsert'"),
    case("bad_type_name", "schema[0].type", "unknown type 'integer'; expected one of: boolean"),
    case("bad_identifier_uppercase", "schema[1].name", "should match pattern '^[a-z_]"),
    case("bad_identifier_injection", "steps[0].to", "should match pattern '^[a-z_]"),
    case("duplicate_column_names", "schema", "column names must be unique"),
    case("key_not_in_schema", "key", "'sku' is not a column of the schema"),
    case("precombine_not_in_schema", "precombine", "'updated_at' is not a column of the schema"),
    case(
        "ordering_not_in_schema",
        "formats.hudi.ordering",
        "'updated_at' is not a column of the schema",
    ),
    case(
        "ordering_missing",
        "formats.hudi.ordering",
        "Hudi tables need an ordering field (Hudi's precombine field): the column whose larger "
        "value wins when two writes carry the same key; for example `formats: {hudi: {ordering: "
        "ts}}`",
    ),
    case(
        "ordering_given_twice",
        "precombine",
        "the old spelling of formats.hudi.ordering, which the scenario gives too",
    ),
    case(
        "format_unknown",
        "formats",
        "no table format 'paimon'; the formats are: hudi, iceberg, delta",
    ),
    case("format_misspelt", "formats", "no table format 'hudy' (did you mean 'hudi'?)"),
    case("format_field_misspelt", "formats.hudi", "unknown field 'oredring' (did you mean"),
    case(
        "format_section_at_top",
        "",
        "unknown field 'hudi': what a scenario gives a format goes under `formats:`",
    ),
    case(
        "format_lacks_ordering",
        "formats.iceberg.ordering",
        "Iceberg has no ordering field, so a scenario cannot give it one; its upserts follow the "
        "one given to hudi (Hudi's precombine field)",
    ),
    case(
        "setting_of_no_format",
        "steps[0].settings.spark.sql.shuffle.partitions",
        "no table format's writer takes 'spark.sql.shuffle.partitions': a step's settings are "
        "writer options of one format (Hudi's start with 'hoodie.'; Iceberg's writer takes none; "
        "Delta's writer takes none)",
    ),
    case(
        "setting_bad_name",
        "steps[0].settings.hoodie.Write.Mode",
        "'hoodie.Write.Mode' is not a Hudi writer option",
    ),
    case("row_unknown_column", "rows[2].colour", "no such column; the table has: id, name, qty"),
    case("row_string_in_int_column", "rows[2].qty", "'thirty' is not a int"),
    case("row_int_out_of_range", "rows[1].qty", "2147483648 is out of range for int"),
    case("row_bad_date", "rows[0].sold_on", "'2024-02-30' is not a date (expected YYYY-MM-DD)"),
    case(
        "row_bad_date_unquoted",
        "rows[0].sold_on",
        "expected YYYY-MM-DD",
    ),
    case("insert_existing_key", "steps[0].rows[1].id", "key 2 exists; use an upsert"),
    case("duplicate_key_in_one_write", "steps[0].rows[1].id", "key 1 appears twice in one write"),
    case("delete_missing_key", "steps[0].keys[1]", "key 9 is not in the table"),
    case("rename_to_existing_name", "steps[0].to", "column 'qty' already exists"),
    case("drop_unknown_column", "steps[1].column", "no column 'name'"),
    case("change_type_unknown_column", "steps[0].column", "no column 'quantity'"),
    case("add_column_after_unknown", "steps[0].after", "no column 'nme'"),
    case("partition_field_unknown_column", "steps[0].column", "'regio' is not a column"),
    case(
        "drop_partition_field_not_partitioned",
        "steps[0].column",
        "the table is not partitioned by 'name' (region)",
    ),
    case("table_types_unknown", "table_types[1]", "Input should be 'cow' or 'mor'"),
    case("needs_without_change", "needs", "no step changes the schema"),
    case(
        "needs_unknown",
        "needs[1]",
        "Input should be 'old_files', 'new_files' or 'older_writer_files'",
    ),
    case(
        "upsert_schema_duplicate_columns",
        "steps[0].schema",
        "column names must be unique",
    ),
    case("two_writer_upgrades", "", "changes the writer's release at most once"),
    case("upgrade_from_not_a_release", "steps[0].from", "String should match pattern"),
    case(
        "older_writer_files_without_upgrade",
        "needs",
        "older_writer_files needs an upgrade_writer step",
    ),
    case(
        "step_extra_field_named_like_op",
        "steps[0]",
        "unknown field 'delete'; known fields: op, column",
    ),
]


def load_error(path: Path, root: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path, root)
    return caught.value


def assert_reports(error: ScenarioError, path: Path, field: str, expected: str) -> None:
    """The message reads `<file>: <field>: <what was expected>`."""
    message = str(error)
    assert error.path == path
    assert error.field == field
    assert message.startswith(f"{path}: {field}: " if field else f"{path}: "), message
    assert expected in message


@pytest.mark.parametrize(("filename", "field", "expected"), CASES)
def test_bad_scenario_is_refused_with_file_and_field(
    filename: str, field: str, expected: str
) -> None:
    path = BAD / filename
    assert_reports(load_error(path, BAD), path, field, expected)


def test_every_corpus_file_has_a_case() -> None:
    listed = {p.values[0] for p in CASES}
    assert listed == {p.name for p in BAD.glob("*.yaml")}


def test_more_than_max_rows_is_refused(tmp_path: Path) -> None:
    # Empty rows are enough: were the limit not checked, the oracle would complain instead.
    rows = "[" + ", ".join(["{}"] * (MAX_ROWS + 1)) + "]"
    path = tmp_path / "too_big.yaml"
    path.write_text(
        "title: Too big\nkey: id\nformats: {hudi: {ordering: ts}}\n"
        f"schema: [{{name: id, type: int}}, {{name: ts, type: long}}]\nrows: {rows}\n"
    )
    assert_reports(load_error(path, tmp_path), path, "rows", f"at most {MAX_ROWS} items")


def test_every_shipped_scenario_loads() -> None:
    files = sorted(p for p in SCENARIOS.rglob("*") if p.suffix in (".yaml", ".yml"))
    scenarios = load_scenarios(SCENARIOS)
    assert len(scenarios) == len(files) > 0
    assert {s.path for s in scenarios} == set(files)
    for scenario in scenarios:
        assert scenario.id == scenario.path.relative_to(SCENARIOS).with_suffix("").as_posix()
        assert scenario.category == scenario.id.split("/")[0]


def test_baselines_sort_first_then_by_id() -> None:
    scenarios = load_scenarios(SCENARIOS)
    flags = [s.spec.baseline for s in scenarios]
    assert flags[0] is True
    assert flags == sorted(flags, reverse=True)
    rest = [s.id for s in scenarios if not s.spec.baseline]
    assert rest == sorted(rest)


@pytest.mark.parametrize(
    ("pattern", "ids"),
    [
        ("rename_column/t*", ["rename_column/then_delete", "rename_column/then_upsert"]),
        ("*/then_upsert", ["add_column/then_upsert", "rename_column/then_upsert"]),
        ("drop_column/drop_o*, baseline/n*", ["baseline/no_change", "drop_column/drop_one"]),
        ("type_change/int_to_long", ["type_change/int_to_long"]),
        ("no_such/*", []),
    ],
)
def test_pattern_filters_by_glob(pattern: str, ids: list[str]) -> None:
    assert [s.id for s in load_scenarios(SCENARIOS, pattern)] == ids


def test_folder_scan_takes_yaml_and_yml_only_and_baseline_first(tmp_path: Path) -> None:
    baseline = SCENARIOS / "baseline" / "no_change.yaml"
    shutil.copy(SCENARIOS / "add_column" / "at_end.yaml", tmp_path / "a_first.yml")
    (tmp_path / "zz").mkdir()
    shutil.copy(baseline, tmp_path / "zz" / "base.yaml")
    (tmp_path / "notes.md").write_text("not a scenario\n")
    assert [s.id for s in load_scenarios(tmp_path)] == ["zz/base", "a_first"]
    assert load_scenarios(tmp_path)[1].category == "uncategorized"


def test_missing_scenario_folder_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ScenarioError, match="scenario folder not found") as caught:
        load_scenarios(missing)
    assert str(missing) in str(caught.value)


def test_one_bad_file_stops_the_whole_folder(tmp_path: Path) -> None:
    shutil.copy(SCENARIOS / "baseline" / "no_change.yaml", tmp_path / "good.yaml")
    shutil.copy(BAD / "delete_missing_key.yaml", tmp_path / "bad.yaml")
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(tmp_path)
    assert caught.value.path == tmp_path / "bad.yaml"


@pytest.mark.parametrize(
    "name",
    [
        "drop'; DROP TABLE t; --.yaml",
        "Upper.yaml",
        "spaced name.yaml",
        "caf\u00e9.yaml",
        "a-b.yaml",
    ],
)
def test_file_names_that_are_not_sql_safe_are_refused(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(SCENARIOS / "baseline" / "no_change.yaml", path)
    with pytest.raises(ScenarioError, match="may use only a-z, 0-9 and _") as caught:
        load_scenarios(tmp_path)
    assert caught.value.path == path


def test_two_ids_with_one_table_name_are_refused(tmp_path: Path) -> None:
    for folder, name in (("a", "b_c.yaml"), ("a_b", "c.yaml")):
        (tmp_path / folder).mkdir()
        shutil.copy(SCENARIOS / "baseline" / "no_change.yaml", tmp_path / folder / name)
    with pytest.raises(ScenarioError, match=r"would have the names of .*\(t_a_b_c_cow\)") as caught:
        load_scenarios(tmp_path)
    assert caught.value.path == tmp_path / "a_b" / "c.yaml"


OLD_FORM = """\
title: Rename, then upsert an older and a newer row
key: id
precombine: ts
schema: [{name: id, type: int}, {name: name, type: string}, {name: ts, type: long}]
rows: [{id: 1, name: a, ts: 100}, {id: 2, name: b, ts: 100}]
steps:
  - {op: rename_column, column: name, to: label}
  - op: upsert
    rows: [{id: 1, label: older, ts: 50}, {id: 2, label: newer, ts: 200}]
"""


def test_the_old_precombine_still_loads_as_hudis_ordering_field(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(OLD_FORM)
    new = tmp_path / "new.yaml"
    new.write_text(OLD_FORM.replace("precombine: ts", "formats: {hudi: {ordering: ts}}"))
    before, after = load_scenario(old, tmp_path).spec, load_scenario(new, tmp_path).spec
    for spec in (before, after):
        assert spec.ordering("hudi") == spec.write_order == "ts"
        assert spec.ordering("iceberg") is None
    assert before.ordering_path("hudi") == "precombine"
    assert after.ordering_path("hudi") == "formats.hudi.ordering"
    # The same table, row for row: the older write of key 1 loses, the newer of key 2 wins.
    assert [s.rows for s in evolve(before)] == [s.rows for s in evolve(after)]
    assert evolve(before)[-1].rows[1]["label"] == "a"
    assert evolve(before)[-1].rows[2]["label"] == "newer"


def test_a_section_may_be_empty_for_a_format_that_takes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    text = OLD_FORM.replace("precombine: ts", "formats: {hudi: {ordering: ts}, iceberg: {}}")
    path.write_text(text)
    assert load_scenario(path, tmp_path).spec.ordering("iceberg") is None
