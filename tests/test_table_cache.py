"""The table cache's keys and entries (`harness.writer.cache`), with a writer that writes a
folder instead of a Hudi table: what is tested here is what the cache keeps, finds and
refuses, not a table format (the integration test reads cached Hudi tables with every
engine)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import SCENARIOS

from lakecompat.engines.table import TableRef
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario, table_name
from lakecompat.harness.scenario.schema import Schema
from lakecompat.harness.writer import cache as table_cache
from lakecompat.harness.writer.base import TableWriter, WriteResult
from lakecompat.harness.writer.cache import CachedWriter, prune, writer_code_version


class FolderWriter(TableWriter):
    """Writes a table as a folder holding a data file; counts its writes."""

    format = "hudi"

    def __init__(self, tables_dir: Path, releases: dict[str, str] | None = None) -> None:
        super().__init__(tables_dir)
        self.releases = releases or {"spark": "3.5.9", "hudi": "1.2.0"}
        self.written: list[str] = []
        self.outcome: dict[str, Any] = {}
        self.options: dict[str, Any] = {"write": {"hoodie.x": "1"}}
        self.per_table: dict[str, Any] = {"hadoop": {"parquet.bloom.filter.enabled#id": "true"}}

    @property
    def versions(self) -> dict[str, str]:
        return self.releases

    @property
    def settings(self) -> dict[str, Any]:
        return self.options

    def table_settings(self, scenario: Scenario) -> dict[str, Any]:
        return self.per_table

    def write(self, scenario: Scenario, table_type: str) -> WriteResult:
        name = table_name(scenario.id, table_type)
        path = self.tables_dir / name
        (path / "region=eu").mkdir(parents=True, exist_ok=True)
        (path / "region=eu" / "data.parquet").write_text(f"rows of {scenario.id}")
        self.written.append(name)
        table = TableRef(
            name,
            path,
            table_type,
            "id",
            columns=(("id", "int"),),
            reference_instant=("001", "002"),
            partition_by=("region",),
            partitions=("region=eu",),
        )
        statements = [f"CALL run_compaction(path => '{path}')"]
        result = WriteResult(table, sql=statements, step_seconds=[0.5], instants=[("001", "002")])
        return replace(result, **{"files": {"summary": "1 file group"}, **self.outcome})

    def write_parquet(
        self, name: str, schema: Schema, rows: list[dict[str, Any]], key: str
    ) -> TableRef:
        raise NotImplementedError

    def script(self, scenario: Scenario, table_type: str) -> str:
        return ""


@pytest.fixture
def scenario() -> Scenario:
    return load_scenarios(SCENARIOS, "rename_column/rename")[0]


def cached_writer(tmp_path: Path, run: str, inner: FolderWriter | None = None) -> CachedWriter:
    inner = inner or FolderWriter(tmp_path / run / "tables")
    inner.tables_dir = tmp_path / run / "tables"
    return CachedWriter(inner, tmp_path / "cache")


def test_a_second_run_reads_a_copy_of_the_table_in_its_own_folder(
    tmp_path: Path, scenario: Scenario
) -> None:
    first = cached_writer(tmp_path, "run1")
    written = first.write(scenario, "mor")
    assert not written.cached and first.inner.written == [written.table.name]  # type: ignore[attr-defined]
    second = cached_writer(tmp_path, "run2")
    cached = second.write(scenario, "mor")
    assert second.inner.written == []  # type: ignore[attr-defined]
    assert cached.cached and cached.step_seconds == []
    assert cached.table == replace(
        written.table, path=tmp_path / "run2" / "tables" / cached.table.name
    )
    data = cached.table.path / "region=eu" / "data.parquet"
    assert data.read_text() == "rows of rename_column/rename"
    # The statements name the table where this run has it, not where it was first written.
    assert cached.sql == [f"CALL run_compaction(path => '{cached.table.path}')"]
    assert cached.instants == written.instants and cached.files == written.files
    # Deleting the copy (a finished run cleans its tables) leaves the cache entry intact.
    shutil.rmtree(cached.table.path)
    assert cached_writer(tmp_path, "run3").write(scenario, "mor").cached


def test_the_writer_says_which_tables_it_holds_without_writing(
    tmp_path: Path, scenario: Scenario
) -> None:
    """A run whose every table is held reads only (its Spark then starts with the quick JIT)."""
    writer = cached_writer(tmp_path, "run1")
    assert not writer.holds(scenario, "cow") and not writer.inner.holds(scenario, "cow")
    writer.write(scenario, "cow")
    assert writer.holds(scenario, "cow") and not writer.holds(scenario, "mor")
    assert not writer.holds(change_scenario(scenario), "cow")


def change_scenario(scenario: Scenario) -> Scenario:
    rows = [dict(row) for row in scenario.spec.rows]
    rows[0]["name"] = "changed"
    return replace(scenario, spec=scenario.spec.model_copy(update={"rows": rows}))


@pytest.mark.parametrize(
    "change",
    [
        "scenario content",
        "scenario id",
        "table type",
        "releases",
        "settings",
        "table settings",
        "code",
        "format",
    ],
)
def test_any_change_to_a_part_of_the_key_writes_afresh(
    tmp_path: Path, scenario: Scenario, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = cached_writer(tmp_path, "run1")
    writer.write(scenario, "cow")
    table_type = "cow"
    inner: FolderWriter = writer.inner  # type: ignore[assignment]
    if change == "scenario content":
        scenario = change_scenario(scenario)
    elif change == "scenario id":
        scenario = replace(scenario, id="rename_column/rename_copy")
    elif change == "table type":
        table_type = "mor"
    elif change == "releases":
        inner.releases = {"spark": "3.5.9", "hudi": "1.1.1"}
    elif change == "settings":
        inner.options = {"write": {"hoodie.x": "2"}}
    elif change == "table settings":
        inner.per_table = {"hadoop": {"parquet.bloom.filter.enabled#name": "true"}}
    elif change == "code":
        monkeypatch.setattr(table_cache, "writer_code_version", lambda **_: "another")
    elif change == "format":
        monkeypatch.setattr(inner, "format", "iceberg")
        writer = CachedWriter(inner, writer.location)
    before = len(inner.written)
    again = writer.write(scenario, table_type)
    assert not again.cached and len(inner.written) == before + 1
    # ... and the unchanged table is still read from the cache.
    monkeypatch.undo()
    original = load_scenarios(SCENARIOS, "rename_column/rename")[0]
    fresh = FolderWriter(tmp_path / "run2" / "tables")
    assert CachedWriter(fresh, writer.location).write(original, "cow").cached


def _copy_of_writer_code(project: Path, copy: Path) -> Path:
    """The parts of `project` that `WRITER_CODE` names, copied to `copy`."""
    for part in table_cache.WRITER_CODE:
        source = project / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (copy / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, copy / part)
    return copy


def test_the_writer_code_version_follows_every_source_file_of_the_writer(tmp_path: Path) -> None:
    project = Path(table_cache.__file__).resolve().parents[2]
    copy = _copy_of_writer_code(project, tmp_path / "project")
    before = writer_code_version(copy)
    assert before == writer_code_version(project)
    statements = copy / "harness/writer/hudi/statements.py"
    statements.write_text(statements.read_text() + "\nA_CHANGE = 1\n")
    writer_code_version.cache_clear()
    assert writer_code_version(copy) != before


def test_comments_docstrings_and_layout_keep_the_tables(tmp_path: Path) -> None:
    project = Path(table_cache.__file__).resolve().parents[2]
    copy = _copy_of_writer_code(project, tmp_path / "project")
    before = writer_code_version(copy)
    statements = copy / "harness/writer/hudi/statements.py"
    source = statements.read_text()
    tree = ast.parse(source)
    first = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and ast.get_docstring(n))
    docstring = ast.get_docstring(first, clean=False) or ""
    edited = source.replace(docstring, docstring + " And one more sentence.", 1)
    edited = "# a comment\n" + edited.replace("\n\n\n", "\n\n\n\n")
    assert edited != source
    statements.write_text(edited)
    writer_code_version.cache_clear()
    assert writer_code_version(copy) == before
    # One statement more is new code.
    statements.write_text(edited + "\nA_CHANGE = 1\n")
    writer_code_version.cache_clear()
    assert writer_code_version(copy) != before


def test_source_that_does_not_write_keeps_the_tables(tmp_path: Path) -> None:
    project = Path(table_cache.__file__).resolve().parents[2]
    # Each entry names a file (or, ending in "/", a folder) that exists: a renamed one would
    # count as writer code again.
    missing = [
        p
        for p in table_cache.NOT_WRITER_CODE
        if not ((project / p).is_dir() if p.endswith("/") else (project / p).is_file())
    ]
    assert missing == []
    copy = _copy_of_writer_code(project, tmp_path / "project")
    before = writer_code_version(copy)
    # Hadoop's configuration files for the Hive services: read by HiveServer2, never the writer.
    hive_conf = copy / "engines/infra/hadoop_conf.py"
    hive_conf.write_text(hive_conf.read_text() + "\nA_CHANGE = 1\n")
    writer_code_version.cache_clear()
    assert writer_code_version(copy) == before
    # The containers the readers' services run in: a folder, every file below it.
    containers = copy / "engines/infra/containers/runtime.py"
    containers.write_text(containers.read_text() + "\nA_CHANGE = 1\n")
    writer_code_version.cache_clear()
    assert writer_code_version(copy) == before


def test_a_change_to_one_formats_writer_keeps_the_other_formats_tables(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for name in ("hudi", "iceberg"):
        (project / "harness/writer" / name).mkdir(parents=True)
        (project / "harness/writer" / name / "__init__.py").write_text("")
        (project / "harness/writer" / name / "writer.py").write_text(f"NAME = {name!r}\n")
    (project / "harness/writer/spark_sql.py").write_text("SHARED = 1\n")
    for part in table_cache.WRITER_CODE[1:]:
        if part.endswith(".py"):
            (project / part).parent.mkdir(parents=True, exist_ok=True)
            (project / part).write_text("SHARED = 1\n")
        else:
            (project / part).mkdir(parents=True, exist_ok=True)
    hudi, iceberg = writer_code_version(project, "hudi"), writer_code_version(project, "iceberg")
    assert hudi != iceberg
    (project / "harness/writer/iceberg/writer.py").write_text("NAME = 'iceberg, changed'\n")
    writer_code_version.cache_clear()
    assert writer_code_version(project, "hudi") == hudi
    assert writer_code_version(project, "iceberg") != iceberg
    (project / "harness/writer/spark_sql.py").write_text("SHARED = 2\n")
    writer_code_version.cache_clear()
    assert writer_code_version(project, "hudi") != hudi


def test_a_refusal_is_kept_and_a_crash_is_not(tmp_path: Path, scenario: Scenario) -> None:
    writer = cached_writer(tmp_path, "run1")
    inner: FolderWriter = writer.inner  # type: ignore[assignment]
    inner.outcome = {
        "failed_at": "steps[0] (rename_column)",
        "message": "refused",
        "rejected": True,
    }
    writer.write(scenario, "cow")
    refused = cached_writer(tmp_path, "run2").write(scenario, "cow")
    assert refused.cached and refused.rejected and refused.message == "refused"
    inner.outcome = {"failed_at": "steps[0] (upsert)", "message": "timeout", "crashed": True}
    writer.write(scenario, "mor")
    writer.write(scenario, "mor")
    assert inner.written[-2:] == [table_name(scenario.id, "mor")] * 2
    inner.outcome = {"files": {"error": "the listing timed out", "unmet": ["..."]}}
    writer.write(change_scenario(scenario), "mor")
    assert not cached_writer(tmp_path, "run3").write(change_scenario(scenario), "mor").cached


def test_a_damaged_entry_is_written_again(tmp_path: Path, scenario: Scenario) -> None:
    writer = cached_writer(tmp_path, "run1")
    writer.write(scenario, "cow")
    entry = writer.entry(scenario, "cow")
    (entry / "result.json").write_text("{not json")
    again = cached_writer(tmp_path, "run2")
    assert not again.write(scenario, "cow").cached
    assert json.loads((entry / "result.json").read_text())["key"]["scenario"] == scenario.id
    assert cached_writer(tmp_path, "run3").write(scenario, "cow").cached


def test_prune_deletes_entries_no_run_used_for_a_month(tmp_path: Path, scenario: Scenario) -> None:
    writer = cached_writer(tmp_path, "run1")
    writer.write(scenario, "cow")
    writer.write(scenario, "mor")
    old = writer.entry(scenario, "cow") / "result.json"
    month_ago = time.time() - 31 * 86_400
    os.utime(old, (month_ago, month_ago))
    assert prune(writer.location) == 1
    assert not old.parent.exists() and writer.entry(scenario, "mor").exists()


class UnmovableWriter(FolderWriter):
    """A format whose tables cannot move (as Iceberg's): the cache keeps them where written."""

    format = "iceberg"
    relocatable = False


def test_a_table_that_cannot_move_is_written_in_its_entry_and_read_there(
    tmp_path: Path, scenario: Scenario
) -> None:
    first = cached_writer(tmp_path, "run1", UnmovableWriter(tmp_path))
    written = first.write(scenario, "cow")
    entry = first.entry(scenario, "cow")
    assert written.table.path == entry / "tables" / written.table.name
    assert not written.cached and (entry / "result.json").is_file()
    assert not (tmp_path / "run1" / "tables").exists()  # nothing in the run's own folder
    second = cached_writer(tmp_path, "run2", UnmovableWriter(tmp_path))
    cached = second.write(scenario, "cow")
    assert second.inner.written == []  # type: ignore[attr-defined]
    assert cached.cached and cached.table == written.table and cached.sql == written.sql
    assert second.holds(scenario, "cow")
    # The writer's own folder is its own again after writing into the entry.
    assert first.inner.tables_dir == tmp_path / "run1" / "tables"


def test_a_half_written_table_in_its_entry_is_written_again(
    tmp_path: Path, scenario: Scenario
) -> None:
    writer = cached_writer(tmp_path, "run1", UnmovableWriter(tmp_path))
    entry = writer.entry(scenario, "cow")
    leftover = entry / "tables" / "t_rename_column_rename_cow" / "stale.parquet"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("a run killed while writing")
    assert not writer.holds(scenario, "cow")
    written = writer.write(scenario, "cow")
    assert not written.cached and not leftover.exists()
    assert writer.inner.written == [written.table.name]  # type: ignore[attr-defined]
    # A crash is not kept: the entry is gone and the next run writes again.
    crashing = cached_writer(tmp_path, "run2", UnmovableWriter(tmp_path))
    crashing.inner.outcome = {"crashed": True, "failed_at": "the seed rows"}  # type: ignore[attr-defined]
    other = load_scenarios(SCENARIOS, "rename_column/then_upsert")[0]
    assert crashing.write(other, "cow").crashed
    assert not crashing.entry(other, "cow").exists()
    # An entry a killed run left behind a day ago is pruned.
    stale = crashing.entry(other, "mor")
    stale.mkdir(parents=True)
    day_ago = time.time() - 2 * 86_400
    os.utime(stale, (day_ago, day_ago))
    prune(tmp_path / "cache")
    assert not stale.exists() and writer.holds(scenario, "cow")
