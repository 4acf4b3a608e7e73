"""Integration: cells read from cached tables equal those read from freshly written ones, for
every default engine of both table formats (Hudi tables are copied from the cache, Iceberg
tables read where they were written into it), and a changed scenario is written afresh."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support import SCENARIOS

from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.run.options import DEFAULT_FORMATS, RunOptions, default_engines
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
#: A table every engine reads and one the writer refuses (its refusal is cached too).
PATTERN = "rename_column/rename,add_column/first"


def run(
    reports: Path, cache: Path | None, scenarios: Path = SCENARIOS, **options: object
) -> list[Cell]:
    chosen = RunOptions(
        shapes=("all",),
        scenarios_dir=scenarios,
        reports_dir=reports,
        table_cache=cache,
        **{"pattern": PATTERN, **options},  # type: ignore[arg-type]
    )
    result = Runner(chosen, Progress(quiet=True)).run()
    return result.cells


def comparable(cell: Cell) -> tuple[object, ...]:
    """What a user reads in a cell, with the run's own folder taken out of the texts."""
    evidence = cell.evidence
    return (
        cell.outcome,
        _run_neutral(cell.reason),
        evidence.sample,
        _run_neutral(evidence.sql or ""),
        evidence.files,
        cell.writer,
        cell.engine_version,
    )


def _run_neutral(text: str) -> str:
    """`text` without what differs between any two runs: the run's folder, the services' ports."""
    text = re.sub(r"\S*/runs/[^/\s]+/", "<run>/", text)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's table cache, empty until `fresh_and_cached` writes into it."""
    return tmp_path_factory.mktemp("table-cache")


@pytest.fixture(scope="module")
def fresh_and_cached(
    tmp_path_factory: pytest.TempPathFactory, cache: Path
) -> tuple[list[Cell], list[Cell]]:
    fresh = run(tmp_path_factory.mktemp("fresh"), cache)
    cached = run(tmp_path_factory.mktemp("cached"), cache)
    return fresh, cached


def test_cells_of_cached_tables_equal_those_of_fresh_ones_for_every_default_engine(
    fresh_and_cached: tuple[list[Cell], list[Cell]],
) -> None:
    fresh, cached = fresh_and_cached
    assert {c.table_from for c in fresh} == {"written"}
    assert {c.table_from for c in cached} == {"cache"}
    assert {c.engine for c in fresh} == set(default_engines(DEFAULT_FORMATS))
    assert {c.format for c in fresh} == set(DEFAULT_FORMATS)
    by_key = {c.key: c for c in cached}
    assert set(by_key) == {c.key for c in fresh}
    differing = [c.key for c in fresh if comparable(c) != comparable(by_key[c.key])]
    assert differing == []
    # Both kinds of table are there: read by the engines, and refused by the writer.
    outcomes = {
        c.scenario: c.outcome.value for c in fresh if c.engine == "spark" and c.format == "hudi"
    }
    assert outcomes["add_column/first"] == "REJECTED"
    assert outcomes["rename_column/rename"] != "REJECTED"


def test_a_changed_scenario_is_written_afresh_and_read_as_changed(
    fresh_and_cached: tuple[list[Cell], list[Cell]], cache: Path, tmp_path: Path
) -> None:
    # The module's cache holds the tables `fresh_and_cached` wrote, which a copy of the
    # scenarios finds where its content is the same (here: the baseline's).
    scenarios = tmp_path / "scenarios"
    shutil.copytree(SCENARIOS, scenarios)
    spark_cow = {
        "engines": ("spark",),
        "formats": ("hudi",),
        "table_types": ("cow",),
        "pattern": "rename_column/rename",
    }
    renamed = scenarios / "rename_column" / "rename.yaml"
    renamed.write_text(renamed.read_text().replace("title:", "title: (edited)", 1))
    changed = run(tmp_path / "r2", cache, scenarios, **spark_cow)
    source = {c.scenario: c.table_from for c in changed}
    assert source == {"rename_column/rename": "written", "baseline/no_change": "cache"}
    titles = {c.title for c in changed if c.scenario == "rename_column/rename"}
    assert all(title.startswith("(edited)") for title in titles)
    # Without the cache (--no-table-cache) every table is written.
    unused = run(tmp_path / "r3", None, scenarios, **spark_cow)
    assert {c.table_from for c in unused} == {"written"}
