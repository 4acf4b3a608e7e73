"""Integration: the CI subset of the catalog, one scenario per category, on every engine.

`make matrix` runs every scenario; this subset touches every category, every engine, both
table types and every query type in a few minutes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import (
    INSTANT,
    SCENARIOS,
    ChildRun,
    SocketWatch,
    headless_chromium,
    is_loopback,
    overview_failures_not_about_their_operation,
    quiet_run,
)

from lakecompat.engines import engine_class
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.store import load_run
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.plan import needed_baselines
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.reads import table_reads
from lakecompat.harness.run.runner import Runner
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES

pytestmark = pytest.mark.integration
#: One scenario per category (the baseline runs anyway).
SUBSET = (
    "add_column/nested_struct_field",
    "drop_column/drop_then_readd",
    "rename_column/then_delete",
    "reorder/move_after",
    "type_change/int_to_string",
    "schema_on_write/missing_column_fill_null",
    "keys_partitions/partitioned_add_column",
    "merge_on_read/add_then_clustering",
    "writer_upgrade/rename_after_upgrade",
)
ENGINES = ("spark", "hive", "trino", "hudi-rs", "daft")
#: The engines with a column in the overview: Daft cannot read Hudi 1.x tables at all.
COLUMNS = ("spark", "hive", "trino", "hudi-rs")
#: The scenarios the run with every engine restarted per scenario reads (and the baseline):
#: those where most engines fail or differ (each engine's errors and wrong answers, a
#: partitioned table, a table an older Hudi release created), since an engine's state after a
#: failed or odd read is what could leak into the next query. Each restart costs about 20 s.
RESTARTED_SUBSET = (
    "rename_column/then_delete",
    "drop_column/drop_then_readd",
    "keys_partitions/partitioned_add_column",
    "writer_upgrade/rename_after_upgrade",
)
VARIANTS = 2 + 5 + 3 + 2 + 1  # Spark, Hive, Trino, hudi-rs, Daft


WATCH = SocketWatch()
#: The run orders that `test_no_cell_depends_on_what_ran_before` compares with the first run.
REVERSE, RESTARTED = "reverse", "engines restarted per scenario"


def order_options(order: str, reports: Path) -> RunOptions:
    """The subset run in another order. The restarted run reads SELECT * under each engine's
    default variant, for the scenarios of `RESTARTED_SUBSET`: a fresh engine process per
    scenario is what it tests; the reverse run covers every scenario of the subset, the other
    variants and the query shapes, whose settings an engine keeps from one query to the
    next."""
    restarted = order == RESTARTED
    return RunOptions(
        scenarios_dir=SCENARIOS,
        pattern=",".join(RESTARTED_SUBSET if restarted else SUBSET),
        engines=ENGINES,
        formats=("hudi",),
        shapes=("all",) if restarted else DEFAULT_SHAPES,
        variants="default" if restarted else "all",
        reports_dir=reports,
        reverse_order=not restarted,
        isolate_scenarios=restarted,
    )


@pytest.fixture(scope="module", autouse=True)
def restarted_beside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChildRun]:
    """The run with every engine restarted before each scenario, started when the module
    starts, in a process of its own: it is mostly JVMs starting, which leaves room for the
    module's other runs beside it."""
    child = ChildRun(order_options(RESTARTED, tmp_path_factory.mktemp("restarted")))
    yield child
    child.stop()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Cell]]:
    reports = tmp_path_factory.mktemp("reports")
    return quiet_run(reports, ENGINES, ",".join(SUBSET), WATCH, DEFAULT_SHAPES)


def test_every_service_listens_on_loopback_only(run: tuple[Path, list[Cell]]) -> None:
    # Spark's JVM, the Metastore, HiveServer2, Trino and the library readers' workers each
    # listen on at least one port.
    commands = " ".join(WATCH.commands.values())
    for main_class in (
        "SparkSubmit",
        "HiveMetaStore",
        "HiveServer2",
        "TrinoMain",
        "library/worker.py",
    ):
        assert main_class in commands, (main_class, WATCH.sockets)
    exposed = [(pid, a, WATCH.commands.get(pid)) for pid, a in WATCH.sockets if not is_loopback(a)]
    assert exposed == []


def outcomes(cells: list[Cell], scenario: str, engine: str, variant: str) -> dict[str, Outcome]:
    """Outcome per `table_type.query_type` of the snapshot and read-optimized cells."""
    return {
        f"{c.table_type}.{c.query_type}": c.outcome
        for c in cells
        if c.scenario == scenario
        and c.engine == engine
        and c.variant == variant
        and c.query_type in ("snapshot", "read_optimized")
        and c.shape == "all"
    }


def test_the_subset_covers_every_category() -> None:
    categories = {s.category for s in load_scenarios(SCENARIOS)}
    assert {s.split("/")[0] for s in SUBSET} | {"baseline"} == categories


def test_every_cell_is_there_with_outcome_reason_and_evidence(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    tables = [(s, t) for s in load_scenarios(SCENARIOS) for t in s.spec.table_types]
    # The subset's scenarios and the baselines that carry their column types.
    every = load_scenarios(SCENARIOS)
    needed = {s.id for s in needed_baselines(every, [s for s in every if s.id in SUBSET])}
    assert needed == {"baseline/no_change", "baseline/structs"}
    chosen = [(s, t) for s, t in tables if s.id in SUBSET or s.id in needed]
    plain = sum(len(HUDI.query_types[t]) * VARIANTS for _, t in chosen)
    assert len([c for c in cells if c.shape == "all"]) == plain
    # and the query shapes: the snapshot under each engine's default variant and the
    # variants that match columns otherwise
    expected = sum(
        len(table_reads(engine_class(e), s, t, DEFAULT_SHAPES)) for s, t in chosen for e in ENGINES
    )
    assert len(cells) == expected > plain
    assert len({c.key for c in cells}) == len(cells)
    for cell in cells:
        assert cell.outcome is not Outcome.ENGINE_FAILED, cell.reason
        if cell.outcome is not Outcome.PASS:
            assert cell.reason, cell.key
        if cell.outcome in (Outcome.PASS, Outcome.WRONG):
            assert cell.evidence.sql, cell.key
        if cell.outcome is Outcome.WRONG:
            assert cell.evidence.sample, cell.key
        if cell.outcome is Outcome.ERROR:
            assert cell.evidence.error, cell.key


def test_spark_with_schema_on_read_reads_every_change_correctly(
    run: tuple[Path, list[Cell]],
) -> None:
    _, cells = run
    for scenario in SUBSET:
        found = outcomes(cells, scenario, "spark", "schema_on_read")
        assert found and set(found.values()) == {Outcome.PASS}, (scenario, found)


def test_partitioned_tables_read_everywhere(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    partitioned = "keys_partitions/partitioned_add_column"
    # Hudi 1.2's default Hive reader cannot fill the added column in old files (NullWritable);
    # the legacy reader can, partitions included.
    hive = outcomes(cells, partitioned, "hive", "legacy_reader")
    assert set(hive.values()) == {Outcome.PASS}, hive
    default = outcomes(cells, partitioned, "hive", "schema_evolution_on")
    assert set(default.values()) == {Outcome.ERROR}, default
    trino = outcomes(cells, partitioned, "trino", "column_names")
    assert trino["cow.snapshot"] is Outcome.PASS
    assert trino["mor.read_optimized"] is Outcome.PASS


def test_clustering_and_missing_columns_read_everywhere(run: tuple[Path, list[Cell]]) -> None:
    _, cells = run
    for scenario in (
        "merge_on_read/add_then_clustering",
        "schema_on_write/missing_column_fill_null",
    ):
        hive = outcomes(cells, scenario, "hive", "schema_evolution_on")
        assert set(hive.values()) == {Outcome.PASS}, (scenario, hive)
        trino = outcomes(cells, scenario, "trino", "column_names")
        assert trino["mor.read_optimized"] is Outcome.PASS


def default_outcome(cells: list[Cell], scenario: str, engine: str) -> str:
    """What an overview cell must say first: the outcome of the engine's default variant where
    it read (`*` when only some table or query types fail)."""
    default = engine_class(engine).default_variant_name("hudi")
    read = {
        c.outcome
        for c in cells
        if c.scenario == scenario
        and c.engine == engine
        and c.variant == default
        and c.shape == "all"
        and c.outcome not in (Outcome.REJECTED, Outcome.UNSUPPORTED)
    }
    worst = next(o for o in (Outcome.ERROR, Outcome.WRONG, Outcome.PASS) if o in read)
    return f"{worst.value}*" if Outcome.PASS in read and len(read) > 1 else worst.value


def test_matrix_md_opens_with_operations_by_engines_and_the_grids(
    run: tuple[Path, list[Cell]],
) -> None:
    run_dir, _ = run
    lines = (run_dir / "matrix.md").read_text().splitlines()
    header = lines.index("| operation | writer | " + " | ".join(COLUMNS) + " |")
    assert lines.index("## Apache Hudi: operations × engines") < header < 20
    row = next(line for line in lines if "(`rename_column/then_delete`)" in line)
    assert row.count(" | ") == len(COLUMNS) + 1
    # Daft reads no Hudi 1.x table: one line under the table, not a column.
    assert any(line.startswith("- `daft` reads no Apache Hudi table") for line in lines)
    assert "## Apache Hudi: type changes" in lines
    for engine in COLUMNS:
        assert f"### {engine} (`{engine_class(engine).default_variant_name('hudi')}`)" in lines


def test_the_overview_shows_only_failures_about_the_operation(
    run: tuple[Path, list[Cell]],
) -> None:
    run_dir, _ = run
    assert overview_failures_not_about_their_operation(run_dir) == []


def test_the_first_screen_answers_which_engines_read_a_renamed_column(
    run: tuple[Path, list[Cell]],
) -> None:
    """matrix.html on a laptop's screen: without scrolling, the renamed column's row shows every
    engine, and the type-change grids (Trino's among them) are one click away."""
    from selenium.webdriver.common.by import By

    run_dir, cells = run
    browser = headless_chromium()
    try:
        browser.set_window_size(1366, 900)
        browser.get((run_dir / "matrix.html").as_uri())
        width, height = browser.execute_script("return [window.innerWidth, window.innerHeight]")
        rename = "rename_column/then_delete"
        row = browser.find_element(By.CSS_SELECTOR, f"tr.operation[data-scenario='{rename}']")
        assert row.rect["y"] + row.rect["height"] <= height
        tds = row.find_elements(By.CSS_SELECTOR, "td[data-engine]")
        # Every engine's cell whole in the window: its words wrap rather than widen it.
        assert all(td.rect["x"] + td.rect["width"] <= width for td in tds), [td.rect for td in tds]
        shown = {td.get_attribute("data-engine"): td.text for td in tds}
        assert list(shown) == ["writer", *COLUMNS]
        for engine in COLUMNS:
            assert shown[engine].startswith(default_outcome(cells, rename, engine).rstrip("*"))
        browser.find_element(By.CSS_SELECTOR, "p.views input[value=types]").click()
        pair = browser.find_element(
            By.CSS_SELECTOR, "table.grid[data-engine=trino] td[data-pair=int_to_string]"
        )
        assert pair.is_displayed() and pair.rect["y"] + pair.rect["height"] <= height
        # (a ⚠ or ✓ after the outcome marks a verdict, which other tests judge; a second line
        # gives the filtered reads)
        outcome = pair.text.splitlines()[0].split(" ")[0]
        assert outcome == default_outcome(cells, "type_change/int_to_string", "trino")
        browser.save_screenshot(str(run_dir / "first-screen.png"))
    finally:
        browser.quit()
    assert (run_dir / "first-screen.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_shows_the_query_shapes_side_by_side_and_filters_them(
    run: tuple[Path, list[Cell]],
) -> None:
    """Every engine's tables of filtered and projected reads sit beside its SELECT * tables;
    the shape boxes show one shape's tables alone."""
    from selenium.webdriver.common.by import By

    run_dir, cells = run
    browser = headless_chromium()
    try:
        browser.get((run_dir / "matrix.html").as_uri())
        boxes = browser.find_elements(By.CSS_SELECTOR, "input[name=shape]")
        assert [b.get_attribute("value") for b in boxes] == list(DEFAULT_SHAPES)
        browser.find_element(By.ID, "open-all").click()

        def shown() -> set[str]:
            sections = browser.find_elements(By.CSS_SELECTOR, "section.matrix")
            return {s.get_attribute("data-shape") for s in sections if s.is_displayed()}

        assert shown() == set(DEFAULT_SHAPES)
        trino = browser.find_element(
            By.CSS_SELECTOR, "section.matrix[data-engine=trino][data-shape=filter] h3"
        )
        assert trino.text == "trino · cow · snapshot filter"
        for name in ("all", "project"):
            browser.find_element(By.CSS_SELECTOR, f"input[name=shape][value={name}]").click()
        assert shown() == {"filter"}
        filtered = [c for c in cells if c.shape == "filter"]
        rows = browser.find_elements(By.CSS_SELECTOR, "section.matrix[data-shape=filter] td.cell")
        assert len(rows) == len(filtered)
    finally:
        browser.quit()


def test_cells_are_recorded_in_a_fixed_order(run: tuple[Path, list[Cell]]) -> None:
    # Hive and Trino read beside the writer, on threads of their own; the results file still
    # lists each table's cells together: engine by engine in the run's order, then query type,
    # then variant, whatever finished first.
    run_dir, _ = run
    info, recorded = load_run(run_dir)
    scenarios = {s.id: s for s in load_scenarios(SCENARIOS)}
    expected = [
        read.key(engine, table_type, scenario)
        for scenario in info["scenarios"]
        for table_type in ("cow", "mor")
        if table_type in scenarios[scenario].spec.table_types
        for engine in ENGINES
        for read in table_reads(
            engine_class(engine), scenarios[scenario], table_type, DEFAULT_SHAPES
        )
    ]
    assert [c.key for c in recorded] == expected


def answers(cells: list[Cell], run_dir: Path) -> dict[tuple[str, ...], tuple[object, ...]]:
    """What each cell found (outcome, reason, differing values), without run-specific paths
    and commit times."""

    def plain(text: str | None) -> str:
        return INSTANT.sub("<instant>", (text or "").replace(str(run_dir), "<run>"))

    # An error's lines after its first are the engine's own message, which may name whichever
    # file it read first (Trino reads a table's files in parallel): the reason must not.
    return {
        c.key: (
            c.outcome,
            plain(c.reason),
            c.evidence.sample,
            plain(c.evidence.error).split("\n")[0],
        )
        for c in cells
    }


@pytest.mark.parametrize("order", [REVERSE, RESTARTED])
def test_no_cell_depends_on_what_ran_before(
    run: tuple[Path, list[Cell]], restarted_beside: ChildRun, tmp_path: Path, order: str
) -> None:
    """The matrix measures what a user's first query of a table gets: running the scenarios in
    the opposite order, or with every engine started afresh before each scenario, gives the
    same cells for every engine."""
    run_dir, _ = run
    _, cells = load_run(run_dir)  # as the other run's cells: from the results file
    options = order_options(order, tmp_path)
    scenarios = {*RESTARTED_SUBSET, "baseline/no_change"} if order == RESTARTED else None
    if order == RESTARTED:
        again_dir, again = restarted_beside.cells()
    else:
        result = Runner(options, Progress(quiet=True)).run()
        again_dir, again = result.run_dir, load_run(result.run_dir)[1]
    read = [
        c
        for c in cells
        if c.shape in options.shapes
        and (scenarios is None or c.scenario in scenarios)
        and (
            options.variants == "all"
            or c.variant == engine_class(c.engine).default_variant_name(c.format or "hudi")
        )
    ]
    assert {c.scenario for c in again} == (scenarios or {c.scenario for c in cells})
    assert len(read) > len(RESTARTED_SUBSET) * len(ENGINES)
    assert answers(again, again_dir) == answers(read, run_dir)
    if order == RESTARTED:  # the baseline and each scenario of its subset: fresh engines each
        hive_log = (again_dir / "logs" / "hiveserver2.log").read_text()
        assert hive_log.count("STARTUP_MSG: Starting HiveServer2") == len(RESTARTED_SUBSET) + 1
