"""Integration: `lakecompat qualify` runs a small catalog at two Hudi releases with real Spark,
and Iceberg tables at two format versions with real Spark and Daft.

Hudi 0.15.0 and 1.2.0 read the catalog differently (an incremental read without schema on
read fails on 0.15.0), so the two points differ. The qualification must list exactly the cells
whose outcome differs between the two points' own run folders, and its HTML page, opened in
headless Chromium, must show them with both outcomes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support import SCENARIOS as SCENARIO_DIR
from support import SCRIPT, SharedRun, headless_chromium, lakecompat, only_run

from lakecompat.engines.metastore.service import DEFAULT_HIVE_VERSION
from lakecompat.harness.report.diff import diff_cells
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.results.outcomes import Outcome
from lakecompat.harness.results.store import load_cells
from lakecompat.harness.run.releases import environment_releases

pytestmark = pytest.mark.integration
SCENARIOS = "rename_column/rename,schema_on_write/extra_column,type_change/int_to_long"


VERSIONS = "points:\n  - {name: hudi-0.15, hudi: 0.15.0}\n  - {name: hudi-1.2, hudi: 1.2.0}\n"
#: The qualification the tests run: two Hudi releases, Spark, two scenarios, copy-on-write.
QUALIFY = ["--engines", "spark", "--scenarios", SCENARIOS, "--table-types", "cow"]


@pytest.fixture(scope="module")
def qualified(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    """The qualification's exit code, its reports folder and what it printed."""
    reports = tmp_path_factory.mktemp("qualify")
    versions = reports / "versions.yaml"
    versions.write_text(VERSIONS)
    args = ["qualify", "--versions", versions, *QUALIFY, "--reports", reports, "--quiet"]
    done = lakecompat(*args, cwd=reports)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.returncode, reports, done.stdout


def test_report_lists_exactly_the_cells_whose_outcome_differs(
    qualified: tuple[int, Path, str],
) -> None:
    code, reports, _ = qualified
    _, old = load_cells(only_run(reports / "points" / "hudi-0.15"))
    _, new = load_cells(only_run(reports / "points" / "hudi-1.2"))
    assert {c.writer["hudi"] for c in old} == {"0.15.0"}
    assert {c.writer["hudi"] for c in new} == {"1.2.0"}
    found = diff_cells(old, new)
    changes = [*found.outcomes, *found.added, *found.missing]
    differing = {case_id(change.new or change.old) for change in changes}
    assert differing, "the two releases should differ on a renamed column"
    document = json.loads((reports / "qualify" / "qualify.json").read_text())
    assert document["baseline"]["versions"]["writer hudi"] == "0.15.0"
    assert document["candidate"]["versions"]["writer hudi"] == "1.2.0"
    changed = {
        c["id"] for c in document["cells"] if c["change"] not in ("unchanged", "still failing")
    }
    assert changed == differing
    breaks = document["counts"]["newly failing"]
    assert code == (1 if breaks else 0)
    markdown = (reports / "qualify" / "qualify.md").read_text()
    for cell_id in differing:
        assert f"`{cell_id}`" in markdown


def test_each_spark_read_at_hudi_0_15_is_its_own_tables(
    qualified: tuple[int, Path, str],
) -> None:
    """Hudi 0.15.0's Spark reader leaves the schema of a table with schema-on-read history in
    the Spark context, and prunes every later read against it. `schema_on_write/extra_column`
    (read after `rename_column/rename`, whose `name` is now `product`) and the rename's own
    time travel then fail with "cannot prune col: name". Each read must be its own table's."""
    _, reports, _ = qualified
    _, cells = load_cells(only_run(reports / "points" / "hudi-0.15"))
    picked = [
        c
        for c in cells
        if c.shape == "all"
        and (
            (c.scenario == "schema_on_write/extra_column" and c.query_type == "snapshot")
            or (c.scenario == "rename_column/rename" and c.query_type == "time_travel")
        )
    ]
    assert len(picked) == 4  # two variants each
    assert all(c.outcome is Outcome.PASS for c in picked), [(c.key, c.reason) for c in picked]


def test_qualification_page_in_headless_chromium(qualified: tuple[int, Path, str]) -> None:
    from selenium.webdriver.common.by import By

    _, reports, _ = qualified
    folder = reports / "qualify"
    document = json.loads((folder / "qualify.json").read_text())
    browser = headless_chromium()
    try:
        browser.get((folder / "qualify.html").as_uri())
        rows = browser.find_elements(By.CSS_SELECTOR, "tr.cell")
        assert {r.get_attribute("data-id") for r in rows} == {c["id"] for c in document["cells"]}
        assert "0.15.0" in browser.find_element(By.ID, "baseline").text
        assert "1.2.0" in browser.find_element(By.ID, "candidate").text
        passing = browser.find_elements(By.CSS_SELECTOR, "section#newly_passing tr.cell")
        expected = [c["id"] for c in document["cells"] if c["change"] == "newly passing"]
        assert [r.get_attribute("data-id") for r in passing] == expected
        if passing:
            passing[0].click()
            details = browser.find_element(By.ID, "details")
            assert details.is_displayed()
            assert browser.find_element(By.ID, "detail-change").text == "newly passing"
            assert "baseline:" in details.text and "candidate: PASS" in details.text
        # Unticking "unchanged" hides that section; unticking spark hides every row.
        browser.find_element(By.CSS_SELECTOR, "input[name=change][value=unchanged]").click()
        assert not browser.find_element(By.ID, "unchanged").is_displayed()
        browser.find_element(By.CSS_SELECTOR, "input[name=engine][value=spark]").click()
        assert not any(r.is_displayed() for r in browser.find_elements(By.CSS_SELECTOR, "tr.cell"))
        browser.save_screenshot(str(folder / "qualify.png"))
    finally:
        browser.quit()
    assert (folder / "qualify.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_line_said_before_it_started_counts_the_cells_each_point_ran(
    qualified: tuple[int, Path, str],
) -> None:
    _, reports, printed = qualified
    line = printed.splitlines()[0]
    found = re.fullmatch(
        r"qualifying 2 version points in 2 run\(s\): (\d+) tables and ([\d,]+) cells a "
        r"point, read by spark \(hudi tables\)",
        line,
    )
    assert found, printed
    for point in ("hudi-0.15", "hudi-1.2"):
        _, cells = load_cells(only_run(reports / "points" / point))
        assert int(found.group(2).replace(",", "")) == len(cells)
        assert int(found.group(1)) == len({(c.scenario, c.table_type) for c in cells})


def test_ctrl_c_then_the_printed_command_completes_the_qualification(
    qualified: tuple[int, Path, str], tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT to the process group) during the first point's run keeps its cells and
    prints `qualify --resume`; pasted, it completes that run in its own folder, runs the
    second point, and the qualification equals the one that ran without a stop."""
    code, reference, _ = qualified
    (tmp_path / "versions.yaml").write_text(VERSIONS)
    command = [str(SCRIPT), "qualify", "--versions", "versions.yaml", *QUALIFY]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    first = tmp_path / "reports" / "points" / "hudi-0.15"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None:
        found = list(first.glob("runs/*/results.jsonl"))
        if found and found[0].read_text().count("\n") >= 4:
            break
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, out + err[-3000:]
    (run_dir,) = (first / "runs").iterdir()
    kept = (run_dir / "results.jsonl").read_text().splitlines()
    record = json.loads((tmp_path / "reports" / "qualify" / "qualification.json").read_text())
    assert record["status"] == "interrupted"
    assert record["runs"] == {"hudi-0.15": str(run_dir)}
    folder = f"reports/points/hudi-0.15/runs/{run_dir.name}"
    assert f"lakecompat: interrupted; {len(kept)} finished cells are kept in {folder}." in err
    (resume,) = [line for line in err.splitlines() if line.startswith("Complete the ")]
    pasted = shlex.split(resume.removeprefix("Complete the qualification with: "))
    assert pasted[1:] == ["qualify", "--resume", "reports/qualify"]
    done = subprocess.run(
        [str(SCRIPT), *pasted[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == code, done.stdout + done.stderr[-3000:]
    assert "run 1/2: hudi-0.15 (hudi 0.15.0, interrupted: completing its run)" in done.stdout
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "complete" and len(info["resumed"]) == 1
    assert (run_dir / "results.jsonl").read_text().splitlines()[: len(kept)] == kept

    def changes(folder: Path) -> dict[str, str]:
        document = json.loads((folder / "qualify" / "qualify.json").read_text())
        return {c["id"]: c["change"] for c in document["cells"]}

    assert changes(tmp_path / "reports") == changes(reference)


def test_hive_reads_with_older_hudi_jars_than_the_writer(lagging_readers_run: SharedRun) -> None:
    """Version skew: the writer on Hudi 1.2.0, HiveServer2 with Hudi 0.15.0's jars (the run
    conftest.py shares: its Hive cells of the copy-on-write baseline)."""
    run_dir = lagging_readers_run.run_dir
    info, _ = load_cells(run_dir)
    cells = lagging_readers_run.of(
        engines=("hive",), scenarios=("baseline/no_change",), table_types=("cow",)
    )
    assert info["hive_hudi"] == "0.15.0"
    assert cells and {(c.writer["hudi"], c.reader_hudi) for c in cells} == {("1.2.0", "0.15.0")}
    command = (run_dir / "logs" / "hiveserver2.log").read_text().splitlines()[0]
    # Hive 3 runs through lakecompat's class loader, which reads its classpath from a file.
    listed = re.search(r"-Dlakecompat\.classpath\.file=(\S+)", command)
    if listed:
        command += Path(listed.group(1)).read_text()
    assert "hudi-spark3.5-bundle_2.12-0.15.0.jar" in command
    assert "hudi-spark3.5-bundle_2.12-1.2.0.jar" not in command
    matrix = (lagging_readers_run.run_dir / "matrix.md").read_text()
    assert (
        f"hive {environment_releases().engine('hive', DEFAULT_HIVE_VERSION)} with Hudi 0.15.0 jars"
        in matrix
    )
    # Hudi 0.15.0 cannot read a 1.x timeline (its layout version check throws): no cell passes.
    assert all(c.outcome.value in ("ERROR", "UNSUPPORTED") for c in cells)
    assert any("IllegalArgumentException" in c.reason for c in cells)


@pytest.fixture(scope="module")
def iceberg_qualified(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """The project's `versions/iceberg-format-2-to-3.yaml` on one merge-on-read scenario whose
    delete leaves delete files, read by Spark and Daft."""
    reports = tmp_path_factory.mktemp("qualify-iceberg")
    done = lakecompat(
        "qualify",
        "--versions",
        SCENARIO_DIR.parent / "versions" / "iceberg-format-2-to-3.yaml",
        "--engines",
        "spark,daft",
        "--scenarios",
        "rename_column/then_delete",
        "--table-types",
        "mor",
        "--shapes",
        "all",
        "--reports",
        reports,
        "--quiet",
        cwd=reports,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.returncode, reports


def test_iceberg_format_version_3_points_show_what_deletion_vectors_break(
    iceberg_qualified: tuple[int, Path],
) -> None:
    """A qualification of Iceberg tables (the points' fields are Iceberg's): format version 2
    against 3. Spark reads deletion vectors as it reads position deletes; Daft 0.7.26 reads a
    deletion vector's Puffin file as Parquet, so its snapshot cell newly fails. Each point's
    cells are judged by the project's known outcomes without a regression."""
    code, reports = iceberg_qualified
    points = {}
    for name in ("format-2", "format-3"):
        point = only_run(reports / "points" / name)
        info, cells = load_cells(point)
        assert info["formats"] == ["iceberg"]
        assert cells and {c.format for c in cells} == {"iceberg"}
        document = json.loads((point / "results.json").read_text())
        assert {c["verdict"] for c in document["cells"]} == {"as expected"}, name
        points[name] = {case_id(c): c for c in cells}
    old, new = points["format-2"], points["format-3"]
    assert {c.writer["format_version"] for c in old.values()} == {"2"}
    assert {c.writer["format_version"] for c in new.values()} == {"3"}
    snapshot = "spark.iceberg.mor.snapshot.rename_column/then_delete[default]"
    assert "1 position-delete file(s)" in old[snapshot].evidence.files["summary"]
    assert "deletion vector(s) in Puffin files" in new[snapshot].evidence.files["summary"]
    spark = [key for key in old if key.startswith("spark.")]
    assert spark and all(old[k].outcome == new[k].outcome for k in spark)
    daft = "daft.iceberg.mor.snapshot.rename_column/then_delete[default]"
    assert old[daft].outcome.value == "PASS"
    assert new[daft].outcome.value == "ERROR" and "puffin" in new[daft].reason
    document = json.loads((reports / "qualify" / "qualify.json").read_text())
    breaks = {c["id"] for c in document["cells"] if c["change"] == "newly failing"}
    # The baseline scenario runs at every point; its merge-on-read table has a delete too.
    assert breaks == {daft, daft.replace("rename_column/then_delete", "baseline/no_change")}
    assert code == 1
