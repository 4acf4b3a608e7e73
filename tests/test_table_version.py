"""Table version as an axis: a Hudi 1.x writer asked to keep an older table version (6, what
Hudi 0.14/0.15 readers read), and known outcomes that match on the version a table has."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_results_report import cell

from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.hudi_jars import check_table_version, default_table_version
from lakecompat.harness.qualify.run import share_groups
from lakecompat.harness.qualify.versions import load_versions, parse_points
from lakecompat.harness.report.summary import writer_text
from lakecompat.harness.results.expectations import Known
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.writer.hudi.script import writer_script
from lakecompat.harness.writer.hudi.statements import write_options

SCENARIOS = Path(__file__).parent.parent / "scenarios"


@pytest.mark.parametrize(
    ("release", "version"),
    [("0.12.3", "5"), ("0.15.0", "6"), ("1.0.2", "8"), ("1.1.1", "9"), ("1.2.0", "9"), ("?", "")],
)
def test_each_release_writes_its_own_table_version_by_default(release: str, version: str) -> None:
    assert default_table_version(release) == version


def test_only_a_hudi_1_writer_can_be_asked_for_a_table_version() -> None:
    check_table_version("1.2.0", "6", "--table-version 6")  # no error
    with pytest.raises(ProvisioningError, match=r"^--table-version 6: Hudi 0.15.0 writes table"):
        check_table_version("0.15.0", "6", "--table-version 6")
    with pytest.raises(ProvisioningError, match=r"writes table version 6 or 8 or 9, not 7$"):
        check_table_version("1.2.0", "7", "--table-version 7")


def test_every_write_and_statement_asks_for_the_table_version() -> None:
    scenario = next(s for s in load_scenarios(SCENARIOS) if s.id == "rename_column/rename")
    options = write_options("t", "cow", scenario.spec, "upsert", "6")
    assert options["hoodie.write.table.version"] == "6"
    assert options["hoodie.write.auto.upgrade"] == "false"
    assert "hoodie.write.table.version" not in write_options("t", "cow", scenario.spec, "upsert")
    script = writer_script(scenario, "mor", "3.5.9", "1.2.0", "6")
    assert "with Hudi 1.2.0 asking for table version 6" in script
    # the seed rows, the upsert and the rename's SQL all carry it
    assert script.count("'hoodie.write.table.version': '6'") >= 3
    assert "hoodie.write.table.version" not in writer_script(scenario, "mor", "3.5.9", "1.2.0")


def test_known_outcomes_match_on_the_table_version_a_table_has() -> None:
    entry = Known(
        engine="daft",
        scenario="*",
        table_version=">=8",
        outcome=Outcome.ERROR,
        reason="Daft reads table versions 5 and 6 only",
    )
    assert entry.matches(cell(engine="daft", writer={"spark": "3.5.9", "hudi": "1.2.0"}))
    asked = {"spark": "3.5.9", "hudi": "1.2.0", "table_version": "6"}
    assert not entry.matches(cell(engine="daft", writer=asked))
    assert not entry.matches(cell(engine="daft", writer={"spark": "3.5.9", "hudi": "0.15.0"}))


def test_points_of_another_table_version_do_not_share_a_run() -> None:
    plan = parse_points(["nine:hudi=1.2.0", "six:hudi=1.2.0,table_version=6"])
    groups = share_groups(plan, RunOptions())
    assert [[p.name for p in group] for group in groups] == [["nine"], ["six"]]
    shipped = load_versions(SCENARIOS.parent / "versions" / "hudi-1.2-table-version-6.yaml")
    assert shipped.candidate_point().table_version == "6"  # a YAML number, read as text


def test_reports_say_which_table_version_the_writer_wrote() -> None:
    info = {"writer": {"spark": "3.5.9", "hudi": "1.2.0", "table_version": "6"}}
    assert writer_text(info) == "Spark 3.5.9 + Hudi 1.2.0 writing table version 6"
    assert (
        writer_text({"writer": {"spark": "3.5.9", "hudi": "1.2.0"}}) == "Spark 3.5.9 + Hudi 1.2.0"
    )


def test_entries_that_differ_only_in_the_table_version_are_not_repeats() -> None:
    from lakecompat.harness.results.expectations import check_references

    common = {"engine": "daft", "scenario": "x/y", "outcome": Outcome.ERROR, "reason": "r"}
    check_references(
        [Known(**common, table_version="==6"), Known(**common)], ["x/y"], ["daft"]
    )  # no error: the second speaks for the other table versions
