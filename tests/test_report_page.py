"""matrix.html of a full default run, in headless Chromium on a laptop's screen (1366 × 900).

The page is rendered from cells made for every read a full run of the catalog makes (every
scenario of `scenarios/` in both table formats, each format's default engines, every variant,
query type and shape, as `harness.run.reads` plans them), each with the outcome and reason
the known outcomes (`expectations/`) give it: a page of a full run's size and words, which
cannot go stale as a checked-in results file would.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import ROOT, SCENARIOS, headless_chromium, made_cell

from lakecompat.engines import engine_class
from lakecompat.engines.infra.delta_jars import DEFAULT_DELTA_VERSION
from lakecompat.engines.infra.hudi_jars import DEFAULT_HUDI_VERSION
from lakecompat.engines.infra.iceberg_jars import DEFAULT_FORMAT_VERSION, DEFAULT_ICEBERG_VERSION
from lakecompat.harness.report.html import render_html
from lakecompat.harness.report.overview_markdown import FORMAT_NAMES
from lakecompat.harness.results.expectations import Known, judge, load_expectations, to_records
from lakecompat.harness.results.outcomes import Cell, Evidence, Outcome
from lakecompat.harness.run.options import DEFAULT_FORMATS, DEFAULT_READERS, default_engines
from lakecompat.harness.run.plan import format_tables
from lakecompat.harness.run.reads import table_reads
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES

#: A laptop's browser window: its page is 1366 × 757 px below the window's bars.
WINDOW = (1366, 900)
#: The engines with a column in each format's overview: Daft cannot read Hudi 1.x tables at
#: all (its known outcomes), so it is one line under the Hudi table instead of a column.
COLUMNS = {
    table_format: [e for e in readers if (table_format, e) != ("hudi", "daft")]
    for table_format, readers in DEFAULT_READERS.items()
}
WRITERS = {
    "hudi": {"spark": "3.5.9", "hudi": DEFAULT_HUDI_VERSION},
    "iceberg": {
        "spark": "3.5.9",
        "iceberg": DEFAULT_ICEBERG_VERSION,
        "format_version": DEFAULT_FORMAT_VERSION,
    },
    "delta": {"spark": "3.5.9", "delta": DEFAULT_DELTA_VERSION, "column_mapping": "name"},
}


def known_outcomes() -> list[Known]:
    """The project's known outcomes, each for every release of its engine (a cell takes the
    outcome of the first entry for its engine, scenario, table, query type, variant and shape
    and the default writers' releases)."""
    return [k.model_copy(update={"versions": ""}) for k in load_expectations(ROOT / "expectations")]


def planned_cells() -> Iterator[Cell]:
    """A PASS cell for every read of a full default run; UNSUPPORTED where the engine lacks
    the query type."""
    scenarios = load_scenarios(SCENARIOS)
    for scenario, table_type, table_format in format_tables(
        scenarios, ("cow", "mor"), DEFAULT_FORMATS
    ):
        for engine in DEFAULT_READERS[table_format]:
            cls = engine_class(engine)
            for read in table_reads(cls, scenario, table_type, DEFAULT_SHAPES, "all", table_format):
                cell = made_cell(
                    scenario=scenario.id,
                    category=scenario.category,
                    title=scenario.spec.title,
                    table_type=table_type,
                    query_type=read.query_type,
                    engine=engine,
                    variant=read.variant.name,
                    shape=read.shape.name,
                    format=table_format,
                    writer=WRITERS[table_format],
                    # Readers that carry Hudi's jars read with the writer's release.
                    reader_hudi=DEFAULT_HUDI_VERSION if table_format in cls.carries else "",
                )
                if not cls.supports(table_type, read.query_type, table_format):
                    reason = cls.unsupported_reason(table_type, read.query_type, table_format)
                    cell = replace(cell, outcome=Outcome.UNSUPPORTED, reason=reason)
                yield cell


def evidence(cell: Cell) -> Evidence:
    """What a failing cell of a real run carries: long SQL, an error with a Java class and a
    path, the table's files, a log excerpt (long words the details must wrap)."""
    table = f"{cell.scenario.replace('/', '__')}_{cell.table_type}"
    location = f"/root/.cache/lakecompat/tables/{cell.format}-{table}/.hoodie/timeline/history"
    error = (
        f"org.apache.hudi.exception.HoodieIOException: Could not read commit details from "
        f"{location}/20261201202619123_20261201202620456.deltacommit.requested: "
        f"{cell.reason}"
    )
    return Evidence(
        sql=f"SELECT * FROM default.{table} ORDER BY id",
        sample=[{"column": "product_name_renamed", "expected": "apple", "got": None}],
        error=error if cell.outcome is Outcome.ERROR else None,
        log=f"2026-12-01 20:26:19 WARN {location.replace('/', '.')}: {cell.reason}",
        files={
            "summary": f"3 file groups\nseed rows, before the schema change: 2 base files "
            f"[id, product, price, ts]\nsteps[0] {cell.category}, after it: 1 base file [id, "
            f"product_name_renamed, price, ts]\n{location}"
        },
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """matrix.html of a full default run of both table formats."""
    known = known_outcomes()
    cells = []
    for row in judge(list(planned_cells()), known):
        cell = row.cell
        if row.known is not None and cell.outcome is Outcome.PASS:
            cell = replace(cell, outcome=row.known.outcome, reason=row.known.reason)
            cell.evidence = evidence(cell)
        cells.append(cell)
    engines = default_engines(DEFAULT_FORMATS)
    info = {
        "run_id": "20261201-202619",
        "status": "complete",
        "writers": WRITERS,
        "engines": dict.fromkeys(engines, "1"),
        "engine_order": list(engines),
        "default_variants_by_format": {
            f: {e: engine_class(e).default_variant_name(f) for e in DEFAULT_READERS[f]}
            for f in DEFAULT_FORMATS
        },
        "known": to_records(known, ROOT / "expectations"),
    }
    path = tmp_path_factory.mktemp("full-run") / "matrix.html"
    path.write_text(render_html(info, judge(cells, known)), encoding="utf-8")
    return path


@pytest.fixture()
def browser(page: Path) -> Iterator[Any]:
    """Headless Chromium showing the page in a laptop's window."""
    driver = headless_chromium()
    try:
        driver.set_window_size(*WINDOW)
        driver.get(page.as_uri())
        yield driver
    finally:
        driver.quit()


def rename_scenarios(table_format: str) -> list[str]:
    """The catalog's rename scenarios that `table_format` has a table of."""
    scenarios: list[Scenario] = load_scenarios(SCENARIOS)
    return sorted(
        {s.id for s, _, _ in format_tables(scenarios, ("cow", "mor"), (table_format,))}
        & {s.id for s in scenarios if s.category == "rename_column"}
    )


def show_format(browser: Any, table_format: str) -> None:
    """Choose the table format the overview shows (the first one is shown on opening)."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, f"input[name=shown-format][value={table_format}]").click()


def box(browser: Any, element: Any) -> dict[str, float]:
    return browser.execute_script("return arguments[0].getBoundingClientRect().toJSON()", element)


def test_the_first_screen_shows_every_rename_row_of_each_format(browser: Any, page: Path) -> None:
    """Which engines read a renamed column: every rename row of the format shown, whole on
    the first screen, without scrolling; choosing the other format shows its rows there."""
    from selenium.webdriver.common.by import By

    width, height = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    for table_format in DEFAULT_FORMATS:
        if table_format != DEFAULT_FORMATS[0]:
            show_format(browser, table_format)
        assert browser.execute_script("return window.scrollY") == 0
        section = browser.find_element(By.ID, f"overview-{table_format}")
        rows = section.find_elements(By.CSS_SELECTOR, "tr.operation")
        renames = [r for r in rows if r.get_attribute("data-scenario").startswith("rename_")]
        wanted = rename_scenarios(table_format)
        assert sorted(r.get_attribute("data-scenario") for r in renames) == wanted
        for row in renames:
            shown = box(browser, row)
            assert row.is_displayed() and shown["top"] >= 0 and shown["bottom"] <= height, (
                table_format,
                row.get_attribute("data-scenario"),
                shown,
            )
            tds = row.find_elements(By.CSS_SELECTOR, "td[data-engine], td.none")
            assert len(tds) == 1 + len(COLUMNS[table_format])
            assert all(box(browser, td)["right"] <= width for td in tds)
        asides = section.find_element(By.CSS_SELECTOR, "ul.asides").text
        for engine in set(DEFAULT_READERS[table_format]) - set(COLUMNS[table_format]):
            assert f"{engine} reads no {FORMAT_NAMES[table_format]} table" in asides
        # The other format's overview is not in the way.
        others = browser.find_elements(By.CSS_SELECTOR, "section.overview")
        assert [s.get_attribute("data-format") for s in others if s.is_displayed()] == [
            table_format
        ]
        browser.save_screenshot(str(page.parent / f"first-screen-{table_format}.png"))


def click_in_place(browser: Any, cell: Any) -> str:
    """Click an overview cell and check it stays where it was, in sight, and the details
    panel's content fits in the panel; the panel's text."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.execute_script(
        "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})", cell
    )
    before = box(browser, cell)
    cell.click()
    panel = browser.find_element(By.ID, "details")
    assert panel.is_displayed()
    after = box(browser, cell)
    where = (cell.get_attribute("data-engine"), cell.get_attribute("data-scenario"))
    assert abs(after["left"] - before["left"]) <= 2, (where, before, after)
    assert abs(after["top"] - before["top"]) <= 2, (where, before, after)
    # In sight: the point at its middle is the cell's, not the panel's.
    assert browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
        "return arguments[0].contains(hit)",
        cell,
    ), (where, after, box(browser, panel))
    fits(browser)
    text = panel.text
    # A cell of the panel's own table shows its evidence in the same place.
    inner = panel.find_elements(By.CSS_SELECTOR, "#summary-cells td.cell")
    if inner:
        inner[-1].click()
        assert browser.find_element(By.ID, "detail-outcome").is_displayed()
        fits(browser)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    assert not panel.is_displayed()
    return text


def fits(browser: Any) -> None:
    """The details panel's content is no wider than the panel: its words wrap."""
    wide, room = browser.execute_script(
        "const p = document.getElementById('details'); return [p.scrollWidth, p.clientWidth]"
    )
    assert wide <= room, (wide, room)


def test_a_clicked_cell_stays_in_place_and_its_details_fit_beside_it(browser: Any) -> None:
    """In both formats: the writer's and the first and last engine's cell of a rename row, a
    cell far down the table and a type-change pair."""
    from selenium.webdriver.common.by import By

    for table_format in DEFAULT_FORMATS:
        if table_format != DEFAULT_FORMATS[0]:
            browser.execute_script("window.scrollTo(0, 0)")
            show_format(browser, table_format)
        section = browser.find_element(By.ID, f"overview-{table_format}")
        rename = rename_scenarios(table_format)[0]
        row = section.find_element(By.CSS_SELECTOR, f"tr.operation[data-scenario='{rename}']")
        tds = row.find_elements(By.CSS_SELECTOR, "td[data-engine]")
        last_row = section.find_elements(By.CSS_SELECTOR, "tr.operation")[-1]
        for cell in (tds[0], tds[1], tds[-1], last_row.find_elements(By.CSS_SELECTOR, "td")[-1]):
            if cell.get_attribute("onclick"):
                text = click_in_place(browser, cell)
                if cell == tds[0]:  # the writer's: each table type by the name users know
                    assert "copy-on-write table" in text, text
        browser.execute_script("window.scrollTo(0, 0)")
        browser.find_element(By.CSS_SELECTOR, "input[name=shown-view][value=types]").click()
        pairs = section.find_elements(By.CSS_SELECTOR, "table.grid td.pair")
        assert pairs
        click_in_place(browser, pairs[-1])
        browser.execute_script("window.scrollTo(0, 0)")
        browser.find_element(By.CSS_SELECTOR, "input[name=shown-view][value=operations]").click()
