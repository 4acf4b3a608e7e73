"""The overview every report opens with: one cell per operation and engine, summing up the
engine's default configuration; the type-change grids; the writer's refusals said once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from test_results_report import cell, write_run

from lakecompat.harness.report.overview import overviews
from lakecompat.harness.report.overview_markdown import asides_text
from lakecompat.harness.report.render import write_reports
from lakecompat.harness.results.expectations import Known, judge
from lakecompat.harness.results.outcomes import BASELINE_NOTE, Cell, Outcome

INFO = {
    "run_id": "20250101-000000",
    "writer": {"spark": "3.5.9", "hudi": "1.2.0"},
    "engines": {"spark": "3.5.9", "trino": "483"},
    "engine_order": ["spark", "trino"],
    "default_variants": {"spark": "off", "trino": "names"},
}
RENAME = "rename_column/rename"


def read(engine: str, variant: str, table_type: str, query_type: str, outcome: Outcome) -> Cell:
    return cell(
        scenario=RENAME,
        category="rename_column",
        title="Rename a column",
        engine=engine,
        variant=variant,
        table_type=table_type,
        query_type=query_type,
        outcome=outcome,
        reason="" if outcome is Outcome.PASS else f"{outcome.value.lower()} because",
    )


def spark_and_trino() -> list[Cell]:
    """Spark: its default fails on MOR snapshot only, the `on` variant passes everywhere.
    Trino: every read fails; it has no incremental query."""
    cells = []
    for table_type, query_type in (
        ("cow", "snapshot"),
        ("mor", "snapshot"),
        ("mor", "read_optimized"),
    ):
        failing = (table_type, query_type) == ("mor", "snapshot")
        cells.append(
            read("spark", "off", table_type, query_type, Outcome.WRONG if failing else Outcome.PASS)
        )
        cells.append(read("spark", "on", table_type, query_type, Outcome.PASS))
        cells.append(read("trino", "names", table_type, query_type, Outcome.WRONG))
    cells.append(read("trino", "names", "cow", "incremental", Outcome.UNSUPPORTED))
    return cells


def the_overview(cells: list[Cell], info: dict[str, Any] = INFO, known: list[Known] = ()):
    [overview] = overviews(info, judge(cells, list(known)))
    return overview


def test_one_row_per_operation_and_a_cell_per_engine() -> None:
    overview = the_overview(spark_and_trino())
    [row] = overview.rows
    assert (row.scenario, row.category) == (RENAME, "rename_column")
    assert list(row.engines) == ["spark", "trino"] == overview.engines
    assert row.writer.text == "accepted"


def test_a_cell_says_where_the_default_fails_and_which_variant_reads_it() -> None:
    spark = the_overview(spark_and_trino()).rows[0].engines["spark"]
    assert spark.text == "WRONG on MOR snapshot · PASS with on"
    assert spark.partial and spark.outcome is Outcome.WRONG
    assert spark.reasons == ["MOR snapshot: wrong because"]
    # every cell behind it, of every variant, is one click away
    assert len(spark.cells) == 6


def test_everywhere_is_one_word_and_unsupported_query_types_are_left_out() -> None:
    trino = the_overview(spark_and_trino()).rows[0].engines["trino"]
    assert trino.text == "WRONG"
    assert not trino.partial


def test_a_query_type_failing_on_both_table_types_is_named_once() -> None:
    cells = [
        read("spark", "off", "cow", "snapshot", Outcome.ERROR),
        read("spark", "off", "mor", "snapshot", Outcome.ERROR),
        read("spark", "off", "mor", "read_optimized", Outcome.PASS),
        read("spark", "off", "cow", "incremental", Outcome.WRONG),
        read("spark", "off", "mor", "incremental", Outcome.PASS),
    ]
    spark = the_overview(cells).rows[0].engines["spark"]
    assert spark.text == "ERROR on snapshot; WRONG on COW incremental"
    assert spark.outcome is Outcome.ERROR


def test_a_whole_table_type_is_named_as_such() -> None:
    cells = [
        read("spark", "off", "cow", "snapshot", Outcome.PASS),
        read("spark", "off", "mor", "snapshot", Outcome.WRONG),
        read("spark", "off", "mor", "read_optimized", Outcome.WRONG),
    ]
    assert the_overview(cells).rows[0].engines["spark"].text == "WRONG on MOR"


def test_without_recorded_defaults_the_first_variant_speaks() -> None:
    info = {k: v for k, v in INFO.items() if k != "default_variants"}
    spark = the_overview(spark_and_trino(), info).rows[0].engines["spark"]
    assert spark.text == "WRONG on MOR snapshot · PASS with on"  # "off" came first


def test_the_writer_refusal_is_its_cell_and_readers_have_nothing_to_read() -> None:
    cells = [
        cell(outcome=Outcome.REJECTED, reason="the writer refused: FIRST", engine=e, variant=v)
        for e, v in (("spark", "off"), ("trino", "names"))
    ]
    cells.append(cell(outcome=Outcome.UNSUPPORTED, engine="trino", variant="names"))
    [row] = the_overview(cells).rows
    assert row.writer.text == "REJECTED"
    assert row.writer.reasons == ["the writer refused: FIRST"]
    assert {e: s.text for e, s in row.engines.items()} == {
        "spark": "refused by the writer",
        "trino": "refused by the writer",
    }
    assert all(s.outcome is None for s in row.engines.values())


def test_a_regression_behind_a_cell_marks_it() -> None:
    known = [
        Known(
            engine="trino",
            scenario="*",
            query_type="incremental",
            outcome=Outcome.UNSUPPORTED,
            reason="none",
        ),
        Known(engine="trino", scenario="*", outcome=Outcome.WRONG, reason="by name"),
    ]
    row = the_overview(spark_and_trino(), known=known).rows[0]
    assert row.engines["spark"].regression  # its WRONG is not known
    assert not row.engines["trino"].regression


def change(source: str, target: str, engine: str, outcome: Outcome, **more: Any) -> Cell:
    return cell(
        scenario=f"type_change/{source}_to_{target}",
        category="type_change",
        title=f"{source} to {target}",
        engine=engine,
        variant={"spark": "off", "trino": "names"}[engine],
        outcome=outcome,
        reason="" if outcome is Outcome.PASS else "why",
        **more,
    )


def test_type_changes_are_grids_per_engine_not_rows() -> None:
    cells = [
        change("int", "long", "spark", Outcome.PASS),
        change("int", "long", "trino", Outcome.WRONG),
        change("int", "long", "trino", Outcome.PASS, table_type="mor"),
        change("string", "date", "spark", Outcome.REJECTED),
        change("string", "date", "trino", Outcome.REJECTED),
    ]
    overview = the_overview(cells)
    assert overview.rows == []
    assert overview.grids["spark"][("int", "long")].short == "PASS"
    assert overview.grids["trino"][("int", "long")].short == "WRONG*"
    assert overview.grids["trino"][("int", "long")].text == "WRONG on COW"
    assert overview.grids["trino"][("string", "date")].short == "refused"
    assert overview.writer_grid[("string", "date")].text == "REJECTED"
    assert overview.writer_grid[("int", "long")].text == "accepted"


def test_markdown_opens_with_the_overview_and_the_grids(tmp_path: Path) -> None:
    cells = [*spark_and_trino(), change("int", "long", "trino", Outcome.WRONG)]
    run_dir = write_run(tmp_path / "run", cells, INFO)
    write_reports(run_dir, [tmp_path / "out"])
    lines = (tmp_path / "out" / "matrix.md").read_text().splitlines()
    first = lines.index("## Apache Hudi: operations × engines")
    assert first < 10  # after the title, the run and the counts
    header = lines.index("| operation | writer | spark | trino |")
    assert lines[header + 2] == "| **rename column** | | | |"
    assert lines[header + 3] == (
        f"| Rename a column (`{RENAME}`) | accepted | WRONG on MOR snapshot · PASS with on ⚠ "
        "| WRONG ⚠ |"
    )
    grid = lines.index("### trino (`names`)")
    assert lines[grid + 2 : grid + 5] == [
        "| source \\ target | long |",
        "|---|---|",
        "| int | WRONG ⚠ |",
    ]


def test_the_page_shows_the_captions_code_as_code_not_backticks(tmp_path: Path) -> None:
    write_reports(write_run(tmp_path / "run", spark_and_trino(), INFO), [tmp_path / "out"])
    page = (tmp_path / "out" / "matrix.html").read_text()
    how = page.split("<p class='how'>")[1:]
    assert how, "the overview has its caption"
    caption = how[0].split("</p>")[0]
    assert "<code>PASS</code>" in caption
    assert "`" not in caption


def baseline(engine: str, variant: str, table_type: str, query_type: str, outcome: Outcome):
    return replace(
        read(engine, variant, table_type, query_type, outcome),
        scenario="baseline/no_change",
        category="baseline",
        title="No schema change",
    )


def test_a_failure_the_baseline_shares_is_said_once_under_the_table() -> None:
    """Iceberg's merge-on-read changelog fails on every table: it is not in the rename row,
    but under the table, once, with how many cells of the rows it left out."""
    delete_files = "ERROR: Delete files are currently not supported in changelog scans"
    cells = [
        baseline("spark", "off", "mor", "snapshot", Outcome.PASS),
        baseline("spark", "off", "mor", "changelog", Outcome.ERROR),
        read("spark", "off", "mor", "snapshot", Outcome.PASS),
        read("spark", "off", "mor", "changelog", Outcome.ERROR),
    ]
    cells[1].reason = delete_files
    cells[3].reason = f"{delete_files}; {BASELINE_NOTE} (baseline: ERROR)"
    overview = the_overview(cells)
    [row] = overview.rows  # the baseline is no operation: it has no row
    assert row.scenario == RENAME
    assert row.engines["spark"].text == "PASS"
    assert len(row.engines["spark"].cells) == 2  # the left-out cell is still behind it
    [aside] = overview.asides
    assert (aside.kind, aside.engine, aside.text) == ("baseline", "spark", "ERROR on changelog")
    assert aside.left_out == 1


def test_a_failure_of_its_own_stays_in_the_row_beside_a_failing_baseline() -> None:
    cells = [
        baseline("spark", "off", "mor", "snapshot", Outcome.PASS),
        baseline("spark", "off", "mor", "changelog", Outcome.ERROR),
        read("spark", "off", "mor", "snapshot", Outcome.PASS),
        read("spark", "off", "mor", "changelog", Outcome.ERROR),
    ]
    cells[1].reason = "ERROR: Delete files are currently not supported in changelog scans"
    cells[3].reason = "ERROR: Starting snapshot (exclusive) 81 is not a parent ancestor of 81"
    overview = the_overview(cells)
    assert overview.rows[0].engines["spark"].text == "ERROR on changelog"
    assert overview.asides[0].left_out == 0


def test_an_engine_that_reads_no_table_of_the_format_is_a_line_not_a_column(
    tmp_path: Path,
) -> None:
    cells = [*spark_and_trino()]
    for table_type, query_type in (("cow", "snapshot"), ("mor", "snapshot")):
        cells.append(baseline("spark", "off", table_type, query_type, Outcome.PASS))
        for scenario in (baseline, read):
            failed = scenario("daft", "default", table_type, query_type, Outcome.ERROR)
            failed.reason = "Exception: Unsupported table version 9"
            cells.append(failed)
    info = {**INFO, "engine_order": ["spark", "trino", "daft"]}
    overview = the_overview(cells, info)
    assert overview.engines == ["spark", "trino"]
    assert set(overview.rows[0].engines) == {"spark", "trino"}
    [aside] = [a for a in overview.asides if a.kind == "unreadable"]
    assert (aside.engine, aside.text) == ("daft", "4 ERROR")
    assert aside.reasons == ["ERROR: Exception: Unsupported table version 9 (4 cells)"]
    run_dir = write_run(tmp_path / "run", cells, info)
    write_reports(run_dir, [tmp_path / "out"])
    lines = (tmp_path / "out" / "matrix.md").read_text().splitlines()
    assert "| operation | writer | spark | trino |" in lines
    assert any(line.startswith("- `daft` reads no Apache Hudi table of this run") for line in lines)


def test_an_engine_failing_every_read_of_a_small_run_keeps_its_column() -> None:
    """Without a baseline table that fails, failing every read is a finding, not a format
    the engine cannot read."""
    overview = the_overview(spark_and_trino())
    assert overview.engines == ["spark", "trino"]
    assert overview.asides == []


def test_reads_with_nothing_to_read_are_said_once() -> None:
    empty = read("spark", "off", "cow", "incremental", Outcome.UNSUPPORTED)
    empty.reason = (
        "nothing to read: no snapshot was committed after the reference snapshot; reading it "
        "anyway failed: ERROR"
    )
    overview = the_overview([read("spark", "off", "cow", "snapshot", Outcome.PASS), empty])
    assert overview.rows[0].engines["spark"].text == "PASS"
    [aside] = overview.asides
    assert (aside.kind, aside.text, aside.scenarios) == ("nothing_to_read", "incremental", [RENAME])
    assert aside.reasons == [
        "nothing to read: no snapshot was committed after the reference snapshot"
    ]


def test_a_shape_the_engine_has_no_query_for_is_named_beside_what_passes() -> None:
    """PASS under `filters:` speaks for the shapes read: one the engine cannot ask (a filter
    on a struct's field, say) is named with its reason, not folded into PASS."""
    cells = [read("spark", "off", t, "snapshot", Outcome.PASS) for t in ("cow", "mor")]
    for table_type in ("cow", "mor"):
        project = read("spark", "off", table_type, "snapshot", Outcome.PASS)
        lacking = read("spark", "off", table_type, "snapshot", Outcome.UNSUPPORTED)
        cells += [replace(project, shape="project"), replace(lacking, shape="filter")]
    shaped = the_overview(cells).rows[0].engines["spark"].shaped
    assert shaped.text == "PASS on project · UNSUPPORTED on filter"
    assert shaped.outcome is Outcome.PASS and shaped.short == "PASS*"
    assert shaped.reasons == ["filter: unsupported because"]
    everything = [c for c in cells if c.shape != "filter"]
    assert the_overview(everything).rows[0].engines["spark"].shaped.text == "PASS"


def test_each_format_speaks_of_its_own_writer_and_markdown_of_no_clicks(tmp_path: Path) -> None:
    """The Iceberg type changes ask whether the Iceberg writer accepts a change (not Hudi);
    matrix.md, which cannot be clicked, says where the cells behind a summary are instead."""
    hudi = [*spark_and_trino(), change("int", "long", "trino", Outcome.WRONG)]
    iceberg = [replace(c, format="iceberg") for c in hudi]
    write_reports(write_run(tmp_path / "run", hudi + iceberg, INFO), [tmp_path / "out"])
    page = (tmp_path / "out" / "matrix.html").read_text()
    section = page.split("id='overview-iceberg'")[1].split("</section>")[0]
    [types] = [p for p in section.split("<p class='how'>") if p.startswith("Rows:")]
    assert "does the Apache Iceberg writer accept the change?" in types.split("</p>")[0]
    assert "Hudi" not in types.split("</p>")[0]
    markdown = (tmp_path / "out" / "matrix.md").read_text()
    assert "click a cell" not in markdown.lower()
    assert "`matrix.html` lists them when a summary is clicked" in markdown
    assert "First whether the Apache Iceberg writer accepts the change" in markdown


def test_the_page_explains_its_shades_and_labels_its_readers(tmp_path: Path) -> None:
    """What a newcomer would ask: what a pale cell means, which versions are the readers',
    and a reason's code shown as code in the list of regressions."""
    cells = [replace(c, reason="reads `product` by name") for c in spark_and_trino()]
    write_reports(write_run(tmp_path / "run", cells, INFO), [tmp_path / "out"])
    page = (tmp_path / "out" / "matrix.html").read_text()
    how = page.split("<p class='how'>")[1].split("</p>")[0]
    assert "a pale colour: it fails on some of them only" in how
    assert "named under its name" in how and "spark: <code>off</code>" not in how
    assert " · readers: spark 3.5.9, trino 483</p>" in page
    regressions = page.split("<ul class='verdicts regression'>")[1].split("</ul>")[0]
    assert "reads <code>product</code> by name" in regressions
    assert "`" not in regressions


def test_each_failing_baseline_table_is_said_once_with_its_name() -> None:
    """A baseline of nested NULL values that one engine reads wrong: the rows leave out the
    cells that fail the same way, and the line under the table names that baseline."""
    nested = "NULLs where values were expected in `items` (1 of 4 rows)"
    cells = [
        baseline("spark", "off", "cow", "snapshot", Outcome.PASS),
        replace(
            baseline("spark", "off", "cow", "snapshot", Outcome.WRONG),
            scenario="baseline/nested_nulls",
            reason=nested,
        ),
        replace(read("spark", "off", "cow", "snapshot", Outcome.WRONG), reason=nested),
        read("spark", "off", "mor", "snapshot", Outcome.PASS),
    ]
    overview = the_overview(cells)
    assert [row.scenario for row in overview.rows] == [RENAME]
    assert overview.rows[0].engines["spark"].text == "PASS"
    [aside] = overview.asides
    assert (aside.scenarios, aside.left_out) == (["baseline/nested_nulls"], 1)


def test_baseline_tables_that_fail_alike_are_said_once_no_change_first() -> None:
    """Three baseline tables meet the same changelog limit and a fourth fails its own way:
    two lines under the table, the first naming `baseline/no_change` first."""
    limit = "UnsupportedOperationException: Delete files are currently not supported"
    cells = [
        replace(
            baseline("spark", "off", "mor", "snapshot", Outcome.ERROR), scenario=name, reason=why
        )
        for name, why in [
            ("baseline/structs", limit),
            ("baseline/arrays", limit),
            ("baseline/no_change", limit),
            ("baseline/maps", "IllegalArgumentException: unorderable columns: [counts]"),
        ]
    ]
    cells.append(read("spark", "off", "cow", "snapshot", Outcome.PASS))
    overview = the_overview(cells)
    assert [a.scenarios for a in overview.asides] == [
        ["baseline/no_change", "baseline/arrays", "baseline/structs"],
        ["baseline/maps"],
    ]
    said = asides_text(overview)
    assert said[0].startswith(
        "`spark` fails without any schema change too (the baseline tables `baseline/no_change`, "
        "`baseline/arrays`, `baseline/structs`): "
    )
    assert said[1].startswith("`spark` fails without any schema change too (the baseline table ")


def test_rows_lost_is_said_only_of_filters_whose_select_star_reads_them() -> None:
    """A filter that returns none of the old rows of a renamed column, where SELECT * reads
    that column NULL for them, repeats SELECT *'s defect: the overview says "rows lost
    without an error" only where SELECT * reads the rows right, and names the control under
    which the filters pass."""
    lost = (
        "rows lost without an error: the filter `product = 'apple'` returned 0 of 1 matching "
        "rows; all 1 missing row(s) were written before product was renamed from name"
    )
    nulls = [{"id": 1, "column": "product", "expected": "apple", "actual": None}]
    plain = read("spark", "off", "cow", "snapshot", Outcome.WRONG)
    plain.reason = "NULLs where values were expected in `product` (1 of 3 rows)"
    plain.evidence.sample = nulls
    shaped = replace(
        read("spark", "off", "cow", "snapshot", Outcome.WRONG), shape="filter", reason=lost
    )
    shaped.evidence = replace(shaped.evidence, sample=[{"id": 1}])
    quiet = replace(shaped, variant="off+data_skipping_off", outcome=Outcome.PASS, reason="")
    summary = the_overview([plain, shaped, quiet]).rows[0].engines["spark"].shaped
    assert summary.text == "WRONG on filter · PASS with data skipping off"
    right = replace(plain, outcome=Outcome.PASS, reason="")
    summary = the_overview([right, shaped, quiet]).rows[0].engines["spark"].shaped
    assert (
        summary.text == "WRONG on filter · rows lost without an error · PASS with data skipping off"
    )
