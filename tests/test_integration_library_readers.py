"""Integration: hudi-rs and Daft, the readers that are Python libraries, on real Hudi tables.

Each library is installed from PyPI into an environment of its own and reads in a worker
process; these tests run them against tables the real writer made and check what they
answer, that a hung read is ended by the query timeout without ending the run, and that no
worker outlives its run.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from support import SCENARIOS, SharedRun, SignalAfter, processes_mentioning

from lakecompat.engines.releases import Releases
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.runner import Runner

pytestmark = pytest.mark.integration
WORKER = "engines/library/worker.py"
V2 = "file_group_reader_v2"  # hudi-rs's default variant
SCHEMAS_DIFFER = (
    "QueryError: ArrowInvalid: the record batches hudi-rs returned have different schemas "
    "(pa.Table.from_batches refuses them)"
)


def run(
    reports: Path,
    pattern: str,
    engines: tuple[str, ...],
    progress: Progress | None = None,
    **options: object,
) -> Runner:
    """A run of `pattern` (and the baseline) with `engines`."""
    run_options = RunOptions(
        shapes=("all",),
        scenarios_dir=SCENARIOS,
        pattern=pattern,
        engines=engines,
        formats=("hudi",),
        reports_dir=reports,
        **options,  # type: ignore[arg-type]
    )
    return Runner(run_options, progress or Progress(quiet=True))


def cell(
    cells: list[Cell], engine: str, scenario: str, table_type: str, query: str, variant: str
) -> Cell:
    """The one cell with these coordinates."""
    wanted = (engine, scenario, table_type, query, variant)
    found = [
        c for c in cells if (c.engine, c.scenario, c.table_type, c.query_type, c.variant) == wanted
    ]
    assert len(found) == 1, found
    return found[0]


def test_hudi_rs_and_daft_read_tables_hudi_1_2_wrote(shared_run: SharedRun) -> None:
    # Their cells of the run conftest.py shares, which other engines read beside them.
    cells = shared_run.of(
        engines=("hudi-rs", "daft"), scenarios=("baseline/no_change", "rename_column/rename")
    )
    # 2 scenarios x (cow 3 + mor 4 query types) x (hudi-rs 2 variants + daft 1).
    assert len(cells) == 42
    assert not [c for c in cells if c.outcome is Outcome.ENGINE_FAILED], "a control check failed"

    # hudi-rs reads a table with no schema change correctly, with every query type.
    baseline = [c for c in cells if c.engine == "hudi-rs" and c.category == "baseline"]
    assert {c.outcome for c in baseline} == {Outcome.PASS}, [c.reason for c in baseline]
    # After a rename it returns the renamed column empty (it does not resolve columns by ID).
    renamed = cell(cells, "hudi-rs", "rename_column/rename", "cow", "snapshot", V2)
    assert renamed.outcome is Outcome.WRONG
    assert renamed.reason.startswith("NULLs where values were expected in `product`")
    assert "HudiTableBuilder.from_base_uri" in renamed.evidence.sql
    # The evidence is the code as it ran, with the variant's options defined.
    assert "settings = {'hoodie.read.file.group.reader.version': '2'}" in renamed.evidence.sql
    assert renamed.engine_version == "0.5.0"

    # Daft's reader refuses tables of Hudi 1.x's table version, and merge-on-read tables.
    daft_cow = cell(cells, "daft", "baseline/no_change", "cow", "snapshot", "default")
    assert daft_cow.outcome is Outcome.ERROR
    assert "Only support table version 5 and 6" in daft_cow.reason
    assert "daft.read_hudi(" in daft_cow.evidence.sql
    # The error with where in Daft it was raised, and what the worker logged meanwhile.
    error = daft_cow.evidence.error or ""
    assert any(line.strip().startswith('File "') and "daft" in line for line in error.splitlines())
    assert (daft_cow.evidence.log or "").startswith("daft.log, written during the query:")
    assert "Only support table version 5 and 6" in (daft_cow.evidence.log or "")
    daft_mor = cell(cells, "daft", "baseline/no_change", "mor", "snapshot", "default")
    assert daft_mor.outcome is Outcome.UNSUPPORTED
    assert "Only support COPY_ON_WRITE table" in daft_mor.reason
    assert daft_mor.evidence.error

    assert processes_mentioning(str(shared_run.run_dir)) == []
    assert not (shared_run.run_dir / "readers").exists()  # the workers' scratch folders are gone


def test_daft_reads_tables_hudi_0_15_wrote(tmp_path: Path) -> None:
    # Table version 6 is what Daft's reader knows: it reads this change correctly, while the
    # baseline table (a column with a NULL) fails in its column statistics.
    result = run(
        tmp_path,
        "add_column/nested_struct_field",
        ("daft",),
        table_types=("cow",),
        releases=Releases({"hudi": "0.15.0"}),
    ).run()
    snapshots = {c.scenario: c for c in result.cells if c.query_type == "snapshot"}
    assert snapshots["add_column/nested_struct_field"].outcome is Outcome.PASS
    baseline = snapshots["baseline/no_change"]
    assert baseline.outcome is Outcome.ERROR
    assert baseline.reason.startswith("QueryError: "), baseline.reason
    assert all(c.writer["hudi"] == "0.15.0" for c in result.cells)


def test_a_hung_library_read_times_out_and_the_worker_is_restarted(tmp_path: Path) -> None:
    progress = SignalAfter(WORKER, signal.SIGSTOP, cells=2)
    runner = run(
        tmp_path,
        "type_change/int_to_long",
        ("hudi-rs",),
        table_types=("cow",),
        query_timeout=10,
        progress=progress,
    )
    result = runner.run()
    assert progress.victim is not None
    errors = [c for c in result.cells if c.outcome is Outcome.ERROR]
    timeouts = [c for c in errors if c.reason == "timeout after 10 s"]
    assert len(timeouts) == 1
    assert timeouts[0].evidence.log  # the worker's log
    # The other errors are hudi-rs's own: its version-1 reader on the retyped table.
    others = {(c.scenario, c.variant, c.reason) for c in errors} - {
        (timeouts[0].scenario, timeouts[0].variant, timeouts[0].reason)
    }
    assert others <= {("type_change/int_to_long", "file_group_reader_v1", SCHEMAS_DIFFER)}, others
    events = (result.run_dir / "events.jsonl").read_text().splitlines()
    assert [json.loads(e)["engine"] for e in events if '"restart"' in e] == ["hudi-rs"]
    # After the restart the worker reads again: the last table's snapshot is right.
    last = cell(result.cells, "hudi-rs", "type_change/int_to_long", "cow", "snapshot", V2)
    assert last.outcome is Outcome.PASS, last.reason
    assert processes_mentioning(str(result.run_dir)) == []
