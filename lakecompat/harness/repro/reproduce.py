"""`lakecompat repro RUN CELL_ID`: a folder that reproduces one cell without lakecompat.

The folder holds the writer part as a PySpark script (`writer.py`, see `repro_script`), the
reader part as the engine's own files (registration DDL, catalog properties, settings and
SQL), the expected table (the oracle's) and the engine's answer as CSV, and an `ISSUE.md`
draft with the versions of everything and the known outcome, if there is one.

Nothing in it is copied from the run alone: the command writes the table again with
lakecompat's writer, runs `writer.py` with `spark-submit` and checks that it makes the same
table (rows and schema), and measures the cell again with the engine. `repro.json` and
`ISSUE.md` say whether the cell reproduced (same outcome and reason) and whether the script
made the same table (or stopped where lakecompat's writer stopped), so a reproduction that no
longer holds says so. `ISSUE.md` is written for the engine's maintainers (`issue`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakecompat.engines import engine_class
from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.context import RunContext
from lakecompat.engines.errors import describe_error, error_text
from lakecompat.engines.formats import FORMATS, format_named
from lakecompat.engines.infra.artifacts import MavenArtifact, fetch
from lakecompat.engines.releases import Releases
from lakecompat.engines.shape import Shape
from lakecompat.engines.spark.runtime import SparkRuntime
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.repro.issue import IssueFacts, write_issue
from lakecompat.harness.repro.result import Reproduction, ScriptCheck
from lakecompat.harness.repro.tables import write_csv
from lakecompat.harness.results.expectations import from_records
from lakecompat.harness.results.outcomes import Cell, Outcome
from lakecompat.harness.results.plain_reads import plain_cells, plain_key
from lakecompat.harness.results.store import ResultsError, load_run
from lakecompat.harness.run import folder as run_folder
from lakecompat.harness.run.cells import in_engine_order, judge, measure, partitions_last
from lakecompat.harness.run.fleet import EngineState, Fleet
from lakecompat.harness.run.folder import recorded_releases
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.run.reads import shape_named
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.shapes import expected_shape
from lakecompat.harness.writer import create_writer, writer_class
from lakecompat.harness.writer.base import TableWriter, WriteResult
from lakecompat.harness.writer.script_text import STEP_MARK, default_path, submit_command

#: Seconds `spark-submit writer.py` may take.
SCRIPT_TIMEOUT = 900


def find_cell(cells: list[Cell], cell_id: str, run_dir: Path) -> Cell:
    """The cell whose JUnit id is `cell_id`; an error suggests ids that are close."""
    for cell in cells:
        if case_id(cell) == cell_id:
            return cell
    prefix = cell_id.split("[", 1)[0]
    close = [case_id(c) for c in cells if case_id(c).startswith(prefix.rsplit(".", 1)[0])]
    hint = f"; cells of that engine and table type include: {', '.join(close[:5])}" if close else ""
    raise ResultsError(
        f"{run_dir}: no cell {cell_id!r} (ids look like "
        f"trino.cow.snapshot.rename_column/rename[column_names], as in junit.xml){hint}"
    )


def default_folder(run_dir: Path, cell_id: str) -> Path:
    """`<run>/repro/<cell id, made a folder name>`."""
    return run_dir / "repro" / re.sub(r"[^A-Za-z0-9_.-]+", "_", cell_id).strip("_")


def reproduce(
    run_dir: Path,
    cell_id: str,
    out: Path | None,
    scenarios_dir: Path,
    progress: Progress | None = None,
) -> Reproduction:
    """Write the reproduction folder of one cell of the run in `run_dir` (see the module);
    `out` None: `default_folder`. Relative paths are taken from the working directory."""
    # Once, here: engines, spark-submit (run from a folder of its own) and the files written
    # all get absolute paths.
    run_dir, scenarios_dir = run_dir.resolve(), scenarios_dir.resolve()
    out = (out or default_folder(run_dir, cell_id)).resolve()
    progress = progress or Progress()
    info, cells = load_run(run_dir)
    cell = find_cell(cells, cell_id, run_dir)
    scenario = _scenario(scenarios_dir, cell.scenario)
    # A shaped cell is judged beside its table's SELECT * cell, as the run judged it.
    plain = plain_cells(cells).get(plain_key(cell)) if cell.shape != "all" else None
    return _reproduce(run_dir, info, cell, scenario, out, progress, plain)


def cell_releases(cell: Cell, info: dict[str, Any]) -> Releases:
    """The releases the cell was read with: its writer's format release, the engines' of its
    run (`run.json`), and the format release its reader carried apart from the writer's."""
    recorded = recorded_releases(info)
    formats = {name: cell.writer[name] for name in FORMATS if cell.writer.get(name)}
    carried = {cell.engine: {cell.format: cell.reader_hudi}} if cell.reader_hudi else {}
    return Releases(formats, recorded.engines, carried)


def _reproduce(
    run_dir: Path,
    info: dict[str, Any],
    cell: Cell,
    scenario: Scenario,
    out: Path,
    progress: Progress,
    plain: Cell | None = None,
) -> Reproduction:
    """`reproduce` of one cell with the releases it was read with (`plain`: the `SELECT *`
    cell of its table, for a shaped cell)."""
    # A Hudi table's writer and readers use the cell's Hudi release; an Iceberg table's Spark
    # loads the default Hudi bundle beside Iceberg's runtime, as in the cell's run.
    releases = cell_releases(cell, info)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    runtime = SparkRuntime(work / "logs", releases=releases)
    context = RunContext(work, runtime, formats=(cell.format,), releases=releases)
    version = cell.writer.get(format_named(cell.format).version_option)
    writer = create_writer(
        runtime,
        work / "tables",
        table_format=cell.format,
        table_version=version,
        release=releases.format(cell.format),
    )
    script = out / "writer.py"
    script.write_text(writer.script(scenario, cell.table_type), encoding="utf-8")
    engine: Engine | None = None
    try:
        progress.stage(f"writing {scenario.id} ({cell.table_type}) with lakecompat's writer")
        written = writer.write(scenario, cell.table_type)
        progress.stage("running writer.py with spark-submit, and comparing the two tables")
        checked = _check_script(writer, script, work, written)
        progress.stage(f"starting {cell.engine}")
        engine = engine_class(cell.engine)(context, releases.carried_by(cell.engine))
        state = EngineState(engine)
        try:
            engine.start()
        except Exception as exc:  # noqa: BLE001 - the cell says so, as in a run
            state.failure = f"could not start: {exc}"
        variant = Variant(cell.variant, dict(cell.settings))
        progress.stage(f"reading with {cell.engine} ({cell.variant})")
        fleet = Fleet(progress, 300, threading.Event())
        again = read_again(fleet, scenario, written, state, cell, writer.versions, plain)
        shape = shape_named(scenario, cell.shape)
        files = _reader_files(engine, written, cell, variant, shape) if written.ok else {}
        answer, from_files = None, None
        if files and not state.failure:
            progress.stage(f"running the reader files with {cell.engine}")
            answer, from_files = _run_files(engine, files, cell, scenario, written, plain)
        table_path = Path(default_path(scenario.id, cell.table_type))
        # What the folder holds (and ISSUE.md shows): the files naming writer.py's table.
        shown = {
            name: relocated(text, written.table.path, table_path) for name, text in files.items()
        }
        for name, text in shown.items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        expected = _expected(scenario, cell, engine, written)
        key = scenario.spec.key
        write_csv(out / "expected.csv", expected, key)
        if isinstance(answer, pa.Table):
            write_csv(out / "actual.csv", answer, key)
        elif answer is not None:
            (out / "actual-error.txt").write_text(answer + "\n", encoding="utf-8")
        result = Reproduction(out, cell, again, checked, from_files)
        known = _known(info, cell)
        facts = IssueFacts(info, known, shown, expected, answer, engine, written)
        write_issue(result, scenario, facts)
        _write_record(result, info, known)
        return result
    finally:
        if engine is not None:
            engine.stop()
        writer.close()
        context.close()
        run_folder.clean(work, keep_tables=False)
        run_folder.clear_service_state(work)
        for scratch in ("script-table", "script-run"):
            shutil.rmtree(work / scratch, ignore_errors=True)


def read_again(
    fleet: Fleet,
    scenario: Scenario,
    written: WriteResult,
    state: EngineState,
    cell: Cell,
    writer: dict[str, str],
    plain: Cell | None = None,
) -> Cell:
    """The cell measured again as a run measures it: the table registered with the engine,
    then the cell's query type read with the settings the cell recorded (a shaped read judged
    beside `plain`, the run's `SELECT *` cell of its table)."""
    registered = fleet.register(state, written)
    variant = Variant(cell.variant, dict(cell.settings))
    shape = shape_named(scenario, cell.shape)
    return measure(
        fleet, scenario, written, state, cell.query_type, variant, writer, registered, shape, plain
    )


def _scenario(root: Path, scenario_id: str) -> Scenario:
    found = [s for s in load_scenarios(root, scenario_id) if s.id == scenario_id]
    if not found:
        raise ResultsError(
            f"{root}: no scenario {scenario_id!r}; give the folder the run read its scenarios "
            "from with --scenario-dir"
        )
    return found[0]


def relocated(text: str, table: Path, target: Path) -> str:
    """A reader file's text with the table at `target` (where writer.py writes it) instead
    of `table`: its path, and where a catalog names tables by folder (Iceberg's Hadoop
    catalog: `<warehouse>/<namespace>/<table>`), the namespace folder and the warehouse too."""
    text = text.replace(str(table), str(target))
    text = text.replace(
        f"`{table.parent.name}`.`{table.name}`", f"`{target.parent.name}`.`{target.name}`"
    )
    text = text.replace(str(table.parent), str(target.parent))
    return text.replace(str(table.parent.parent), str(target.parent.parent))


def _check_script(
    writer: TableWriter, script: Path, work: Path, written: WriteResult
) -> ScriptCheck:
    """Run writer.py with spark-submit into a folder of its own and hold what it did against
    what lakecompat's writer did: the same table (data columns: names, types and every row),
    or, where lakecompat's writer stopped, a stop at the same step."""
    # An Iceberg table's folder is `<warehouse>/<namespace>/<name>`, as in a run.
    target = work / "script-table" / "tables" / written.table.name
    log = work / "logs" / "writer-script.log"
    jar = writer.script_jar(writer.versions)
    also = writer.script_needs(writer.versions)
    pyspark = writer.script_pyspark(writer.versions)
    code = _spark_submit(script, target, (jar, *also), work / "script-run", log, pyspark)
    output = log.read_text(errors="replace").splitlines()
    marks = [i for i, line in enumerate(output) if line.startswith(STEP_MARK)]
    reached = output[marks[-1]].removeprefix(STEP_MARK) if marks else "none of its steps"
    error = _script_error(output[marks[-1] if marks else 0 :], log)
    if not written.ok:
        if code == 0:
            detail = (
                f"writer.py ran through, but lakecompat's writer stopped at {written.failed_at}"
            )
            return ScriptCheck(None, False, detail)
        same = reached == written.failed_at
        where = (
            "like lakecompat's writer" if same else f"lakecompat's writer at {written.failed_at}"
        )
        return ScriptCheck(None, same, f"writer.py stops at {reached} ({where}): {error}")
    if code != 0:
        failed = f"writer.py failed at {reached} (exit code {code}): {error}"
        return ScriptCheck(False, None, failed)
    try:
        paths = (written.table.path, target)
        read = writer_class(written.table.format).read_back
        ours, theirs = (writer.in_spark(table_summary, path, read) for path in paths)
    except Exception as exc:  # noqa: BLE001 - a table that cannot be read is not the same
        return ScriptCheck(False, None, f"the two tables could not be compared: {exc}")
    compared = {"lakecompat": ours, "writer.py": theirs}
    if _content(ours) == _content(theirs):
        detail = f"writer.py makes the same table: {ours['rows']} rows, columns {ours['columns']}"
        return ScriptCheck(True, None, detail, compared)
    return ScriptCheck(False, None, _difference(ours, theirs), compared)


def _script_error(lines: list[str], log: Path) -> str:
    """The error writer.py stopped with: the Java exception py4j carries, else Python's."""
    said = [
        line.removeprefix(": ")
        for line in lines
        if re.match(r"^(: )?[\w.$]+(Error|Exception)\b", line)
    ]
    java = [line for line in said if not line.startswith("py4j.")]
    return (java or said or [f"no error in its output ({log})"])[0]


def table_summary(
    runtime: SparkRuntime, path: Path, read: Callable[[Any, Path], tuple[list[Any], list[Any]]]
) -> dict[str, Any]:
    """The table's data columns (name and type), its row count and a digest of its rows, as
    `runtime`'s Spark reads it with `read` (its format's writer's `read_back`)."""
    fields, found = read(runtime.session(), path)
    rows = sorted(map(repr, found))
    return {
        "path": str(path),
        "columns": [f"{f.name} {f.dataType.simpleString()}" for f in fields],
        "rows": len(rows),
        "sha256": hashlib.sha256("\n".join(rows).encode()).hexdigest(),
        "sample": rows[:3],
    }


def _content(summary: dict[str, Any]) -> dict[str, Any]:
    """A table's summary without where it is."""
    return {name: value for name, value in summary.items() if name != "path"}


def _difference(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """How writer.py's table differs from lakecompat's writer's."""
    if ours["columns"] != theirs["columns"]:
        return (
            f"writer.py's table has the columns {theirs['columns']}, lakecompat's writer's "
            f"{ours['columns']}"
        )
    return (
        f"the rows differ: lakecompat's writer's table has {ours['rows']} rows (first: "
        f"{ours['sample']}), writer.py's {theirs['rows']} (first: {theirs['sample']})"
    )


def _spark_submit(
    script: Path,
    target: Path,
    jars: tuple[MavenArtifact, ...],
    cwd: Path,
    log: Path,
    pyspark: str = "",
) -> int:
    """Run `spark-submit writer.py TARGET` from `cwd` as writer.py's header says (offline,
    with the cached `jars`, on PySpark `pyspark` where it is not lakecompat's own); its exit
    code (-1: it ran out of time), output in `log`."""
    jar, *also = jars
    # An absolute script path: its folder is not cwd.
    variables, argv = submit_command(jar, str(script), tuple(also), pyspark)
    for needed in jars:
        fetch(needed)  # the header names the cached files: make sure they are there
    cwd.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    argv.append(str(target))
    with log.open("w", encoding="utf-8") as output:
        try:
            done = subprocess.run(
                argv,
                cwd=cwd,
                env={**os.environ, **variables},
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=SCRIPT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            output.write(f"\nlakecompat: writer.py ran for {SCRIPT_TIMEOUT} s and was stopped\n")
            return -1
    return done.returncode


def _reader_files(
    engine: Engine, written: WriteResult, cell: Cell, variant: Variant, shape: Shape
) -> dict[str, str]:
    try:
        return engine.reproduction(written.table, cell.query_type, variant, shape)
    except Exception as exc:  # noqa: BLE001 - a read that cannot even be spelled is the finding
        return {"reader.sql": f"-- {cell.engine}: no SQL for this read: {exc}\n"}


def _run_files(
    engine: Engine,
    files: dict[str, str],
    cell: Cell,
    scenario: Scenario,
    written: WriteResult,
    plain: Cell | None = None,
) -> tuple[Any, Cell | None]:
    """Run the query the reader files spell out, as they spell it: the engine's whole answer
    (an Arrow table) or its error text, and the cell judged on it (None where the engine
    lacks the query type: that cell's reason is not about an answer)."""
    sql, variant = engine.reproduction_query(files)
    judged = copy.deepcopy(cell)
    supported = engine.supports(cell.table_type, cell.query_type, cell.format)
    try:
        # As a run reads the table: an engine may explain a failed read by more reads.
        answer = engine.query_table(written.table, sql, variant)
    except Exception as exc:  # noqa: BLE001 - the error is the answer
        judged.outcome, judged.reason = Outcome.ERROR, describe_error(exc)
        return error_text(exc, lines=40, limit=8000), judged if supported else None
    if not supported:
        return answer, None
    shape = shape_named(scenario, cell.shape)
    last = partitions_last(engine, written.table.partition_by, shape)
    table = written.table
    return answer, judge(judged, scenario, table, cell.query_type, answer, sql, last, shape, plain)


def _expected(scenario: Scenario, cell: Cell, engine: Engine, written: WriteResult) -> pa.Table:
    """The oracle's table in the cell's shape, its columns in the order the engine lists
    them (an Iceberg append scan: of the appends the written table's snapshot log names)."""
    shape = shape_named(scenario, cell.shape)
    table = written.table
    expected = expected_shape(
        scenario.spec, cell.table_type, cell.query_type, shape, table.appended, table.committed
    )
    return in_engine_order(expected, partitions_last(engine, scenario.spec.partition_by, shape))


def _known(info: dict[str, Any], cell: Cell) -> dict[str, Any] | None:
    """The known outcome that matched the cell in its run, if any."""
    records = info.get("known") or []
    for record, entry in zip(records, from_records(records), strict=True):
        if entry.matches(cell):
            return record
    return None


def _write_record(result: Reproduction, info: dict[str, Any], known: dict[str, Any] | None) -> None:
    """repro.json: what was measured, for tools."""
    cell, again, script = result.cell, result.again, result.script
    record = {
        "cell": case_id(cell),
        "run": info.get("run_id"),
        "outcome": cell.outcome.value,
        "reason": cell.reason,
        "again": {"outcome": again.outcome.value, "reason": again.reason},
        "from_files": None
        if result.from_files is None
        else {"outcome": result.from_files.outcome.value, "reason": result.from_files.reason},
        "reproduced": result.reproduced,
        "same_table": script.same_table,
        "same_stop": script.same_stop,
        "table_check": script.detail,
        "compared": script.compared,
        "known": known,
        "files": sorted(
            str(p.relative_to(result.folder))
            for p in result.folder.rglob("*")
            if p.is_file() and "work" not in p.relative_to(result.folder).parts
        ),
    }
    (result.folder / "repro.json").write_text(json.dumps(record, indent=1) + "\n")


def _files_line(result: Reproduction) -> str:
    files = result.from_files
    if files is None:
        return "The reader files were not judged (no answer to judge for this cell)."
    if (files.outcome, files.reason) == (result.cell.outcome, result.cell.reason):
        verdict = "the same as the run's"
    else:
        verdict = f"NOT the run's ({files.reason.splitlines()[0] if files.reason else 'PASS'})"
    return f"The reader files' query, run as written: {files.outcome.value}, {verdict}."


def summary(result: Reproduction) -> str:
    """What the command prints at the end."""
    again = result.again
    status = "reproduced" if result.reproduced else "NOT reproduced"
    lines = [
        f"wrote {result.folder}",
        f"  the cell again: {again.outcome.value} ({status}; the run had "
        f"{result.cell.outcome.value})",
        f"  {_files_line(result)}",
        f"  {result.script.detail.splitlines()[0]}",
    ]
    return "\n".join(lines)
