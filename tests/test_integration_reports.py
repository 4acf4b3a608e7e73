"""Integration: real Spark runs through the console script, judged against known outcomes.

- a deliberately altered expectation makes the run exit 1 and the reports name the cell;
- the project's own expectations judge the same run as all expected (exit 0);
- `lakecompat diff` between runs with a changed engine setting lists exactly the cells that
  setting changes;
- the HTML report, opened in headless Chromium, opens with the overview and shows every cell
  with its outcome, its details beside it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import SCRIPT, headless_chromium, lakecompat

from lakecompat.harness.options import DEFAULT_EXPECTATIONS
from lakecompat.harness.report.diff import KEY_FIELDS
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import load_run

pytestmark = pytest.mark.integration
SCENARIO = "rename_column/rename"
#: Spark with schema-on-read off reads the renamed column as NULL: a known WRONG cell.
ALTERED = f"spark.cow.snapshot.{SCENARIO}[schema_on_read_off]"
SCHEMA_ON_READ = "spark:hoodie.schema.on.read.enable=true"


def spark_run(reports: Path, *extra: str | Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    done = lakecompat(
        "run",
        "--engines",
        "spark",
        "--formats",
        "hudi",
        "--scenarios",
        SCENARIO,
        "--table-types",
        "cow",
        "--shapes",
        "all",
        "--reports",
        reports,
        "--quiet",
        *extra,
        cwd=reports.parent,
    )
    runs = sorted((reports / "runs").iterdir()) if (reports / "runs").is_dir() else []
    assert runs, done.stderr[-3000:]
    return done, runs[-1]


def altered_expectations(folder: Path) -> Path:
    """The project's expectations with ALTERED's cell said to be ERROR instead of WRONG: an
    entry for that cell alone, put first (the first entry that matches a cell wins), so the
    project's entry, which may speak for other cells too, is left as it is."""
    shutil.copytree(DEFAULT_EXPECTATIONS, folder)
    first = sorted(folder.glob("*.yaml"))[0]
    data = yaml.safe_load(first.read_text())
    data["known"].insert(
        0,
        {
            "engine": "spark",
            "scenario": SCENARIO,
            "table_type": "cow",
            "query_type": "snapshot",
            "variant": "schema_on_read_off",
            "outcome": "ERROR",
            "reason": "altered by the test: the cell is WRONG",
        },
    )
    first.write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


@pytest.fixture(scope="module")
def altered_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """A run judged against the altered expectations: (stdout, stderr, run folder)."""
    base = tmp_path_factory.mktemp("altered")
    expectations = altered_expectations(base / "expectations")
    done, run_dir = spark_run(base / "reports", "--expectations", expectations)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    return done.stdout, done.stderr, run_dir


def test_an_altered_expectation_exits_1_and_the_reports_name_the_cell(
    altered_run: tuple[str, str, Path],
) -> None:
    stdout, _, run_dir = altered_run
    assert f"regression: {ALTERED}: WRONG (expected ERROR)" in stdout
    assert "against the known outcomes: 1 regression, 0 fixed upstream, " in stdout
    for name in ("summary.md", "matrix.md"):
        text = (run_dir / name).read_text()
        assert f"| `{ALTERED}` | ERROR | WRONG |" in text, name
    junit = (run_dir / "junit.xml").read_text()
    assert "WRONG (expected ERROR)" in junit
    document = json.loads((run_dir / "results.json").read_text())
    regressions = [c for c in document["cells"] if c["verdict"] == "regression"]
    assert [(c["table_type"], c["query_type"], c["variant"]) for c in regressions] == [
        ("cow", "snapshot", "schema_on_read_off")
    ]


def test_the_project_expectations_judge_the_same_run_as_expected(
    altered_run: tuple[str, str, Path], tmp_path: Path
) -> None:
    _, _, run_dir = altered_run
    done = lakecompat(
        "report", run_dir, "--out", tmp_path, "--expectations", DEFAULT_EXPECTATIONS, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 regressions, 0 fixed upstream" in done.stdout
    assert "No regressions" in (tmp_path / "summary.md").read_text()


def test_strict_fails_on_a_known_failure_that_now_passes(
    altered_run: tuple[str, str, Path], tmp_path: Path
) -> None:
    _, _, run_dir = altered_run
    folder = tmp_path / "known"
    folder.mkdir()
    # Spark reads the baseline correctly; claiming it fails makes it "fixed upstream".
    (folder / "k.yaml").write_text(
        f"known:\n- {{engine: spark, scenario: {SCENARIO}, variant: schema_on_read_off, "
        "table_type: cow, query_type: snapshot, outcome: WRONG, reason: renamed reads NULL}\n"
        "- {engine: spark, scenario: baseline/no_change, query_type: snapshot, outcome: WRONG, "
        "reason: pretend}\n"
    )
    relaxed = lakecompat(
        "report", run_dir, "--out", tmp_path, "--expectations", folder, cwd=tmp_path
    )
    strict = lakecompat(
        "report", run_dir, "--out", tmp_path, "--expectations", folder, "--strict", cwd=tmp_path
    )
    assert (relaxed.returncode, strict.returncode) == (0, 1), relaxed.stdout + strict.stdout
    assert "fixed upstream: spark.cow.snapshot.baseline/no_change[schema_on_read]" in strict.stdout


def test_diff_lists_exactly_the_cells_an_engine_setting_changes(
    altered_run: tuple[str, str, Path], tmp_path: Path
) -> None:
    _, _, before = altered_run
    done, after = spark_run(tmp_path / "reports", "--set", SCHEMA_ON_READ)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]  # known WRONG now passes
    _, new_cells = load_run(after)
    assert all(c.settings["hoodie.schema.on.read.enable"] == "true" for c in new_cells)
    # Expected independently of `diff`: with schema-on-read forced on, the `_off` variant
    # answers like the `schema_on_read` variant did in the first run.
    _, old_cells = load_run(before)
    by_key = {c.key: c for c in old_cells}
    expected = set()
    for cell in old_cells:
        if cell.variant == "schema_on_read_off":
            twin = by_key[(*cell.key[:4], "schema_on_read", cell.shape, cell.format)]
            if twin.outcome != cell.outcome:
                expected.add((cell.key, cell.outcome.value, twin.outcome.value))
    assert expected, "schema-on-read must matter for a renamed column"
    diff = lakecompat("diff", before, after, "--json", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
    changes = json.loads(diff.stdout)["changes"]
    listed = {
        (tuple(c[k] for k in KEY_FIELDS), c["old"]["outcome"], c["new"]["outcome"]) for c in changes
    }
    assert listed == expected


def close_details(browser: Any) -> None:
    """Close the details panel (it lies over the page: closing it moves nothing)."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "close-details").click()
    assert not browser.find_element(By.ID, "details").is_displayed()


def test_html_report_in_headless_chromium(altered_run: tuple[str, str, Path]) -> None:
    from selenium.webdriver.common.by import By

    _, _, run_dir = altered_run
    browser = headless_chromium()
    try:
        browser.get((run_dir / "matrix.html").as_uri())
        # The overview comes first: the renamed column's row, with the regression marked.
        overview = browser.find_element(By.CSS_SELECTOR, "main > section.overview")
        assert overview.rect["y"] < 200
        spark = browser.find_element(
            By.CSS_SELECTOR, f"tr.operation[data-scenario='{SCENARIO}'] td[data-engine=spark]"
        )
        assert "regression" in spark.get_attribute("class").split()
        assert spark.text.startswith("WRONG")
        spark.click()
        behind = {
            td.get_attribute("data-id")
            for td in browser.find_elements(By.CSS_SELECTOR, "#summary-cells td.cell")
        }
        document = json.loads((run_dir / "results.json").read_text())
        ids = [case_id(Cell.from_dict(c)) for c in document["cells"]]
        assert ALTERED in behind
        assert behind == {i for i in ids if i.startswith("spark.") and SCENARIO in i}
        close_details(browser)
        # Every cell is in the page, one click away (the engine's section builds its tables).
        browser.find_element(By.ID, "open-all").click()
        shown = {
            td.get_attribute("data-id"): td.get_attribute("data-outcome")
            for td in browser.find_elements(By.CSS_SELECTOR, "td.cell")
        }
        assert shown == {case_id(Cell.from_dict(c)): c["outcome"] for c in document["cells"]}
        regressions = browser.find_elements(By.CSS_SELECTOR, "section.matrix td.regression")
        assert [td.get_attribute("data-id") for td in regressions] == [ALTERED]
        assert (
            ALTERED
            in browser.find_element(By.ID, "regression").text
            + browser.find_element(By.CSS_SELECTOR, "ul.regression").text
        )
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", regressions[0])
        regressions[0].click()
        details = browser.find_element(By.ID, "details")
        assert details.is_displayed()
        # The details sit beside the clicked cell (on the side of the window away from it),
        # never over it.
        cell_box = browser.execute_script(
            "return arguments[0].getBoundingClientRect().toJSON()", regressions[0]
        )
        panel_box = browser.execute_script(
            "return arguments[0].getBoundingClientRect().toJSON()", details
        )
        assert cell_box["right"] <= panel_box["left"] or panel_box["right"] <= cell_box["left"], (
            cell_box,
            panel_box,
        )
        assert cell_box["top"] >= 0 and cell_box["bottom"] <= browser.execute_script(
            "return window.innerHeight"
        )
        assert browser.find_element(By.ID, "detail-outcome").text == "WRONG"
        assert "regression" in details.text and "expected ERROR" in details.text
        assert "NULL" in browser.find_element(By.ID, "detail-reason").text
        # A failing cell names the command that reproduces it, as it works from any folder.
        command = browser.find_element(By.ID, "detail-repro").text
        project = run_dir.parent.parent.parent
        repro = f"{SCRIPT} repro reports/runs/{run_dir.name} '{ALTERED}'"
        assert command == f"cd {project} && {repro}"
        browser.save_screenshot(str(run_dir / "matrix.png"))
        close_details(browser)
        # Filter: hide PASS; rows whose every cell passes disappear, the renamed one stays.
        browser.find_element(By.CSS_SELECTOR, "input[name=outcome][value=PASS]").click()
        visible = [
            row.text
            for row in browser.find_elements(By.CSS_SELECTOR, "tr.scenario")
            if row.is_displayed()
        ]
        assert visible and all(SCENARIO in text for text in visible)
        assert not any("baseline/no_change" in text for text in visible)
        # Filter by engine: unticking spark hides every table.
        browser.find_element(By.CSS_SELECTOR, "input[name=engine][value=spark]").click()
        assert not any(
            s.is_displayed() for s in browser.find_elements(By.CSS_SELECTOR, "section.matrix")
        )
    finally:
        browser.quit()
    assert (run_dir / "matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_run_field_of_a_real_run_is_documented(altered_run: tuple[str, str, Path]) -> None:
    _, _, run_dir = altered_run
    document = json.loads((run_dir / "results.json").read_text())
    docs = (Path(__file__).resolve().parent.parent / "docs" / "results.md").read_text()
    fields = set(document["run"]) | {k for entry in document["run"]["known"] for k in entry}
    missing = sorted(f for f in fields if f"`{f}`" not in docs)
    # entry fields of expectations files are documented in the example of known-outcomes.md
    known_page = (Path(__file__).resolve().parent.parent / "docs" / "known-outcomes.md").read_text()
    assert [f for f in missing if f"  {f}:" not in known_page] == []
