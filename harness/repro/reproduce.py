"""`lakecompat repro RUN CELL_ID`: a folder that reproduces one cell without lakecompat.

The folder holds the writer part as a PySpark script (`writer.py`, see `repro_script`), the
reader part as the engine's own files (registration DDL, catalog properties, settings and
SQL), the expected table (the oracle's) and the engine's answer as CSV, and an `ISSUE.md`
draft with the versions of everything and the known outcome, if there is one.

Nothing in it is copied from the run alone: the command writes the table again with
lakecompat's writer, runs `writer.py` with `spark-submit` and checks that it makes the same
table (rows and schema), and measures the cell again with the engine. `repro.json` and
`ISSUE.md` say whether the cell reproduced (same outcome and reason) and whether the script
made the same table, so a reproduction that no longer holds says so.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from engines import engine_class
from engines.answers import nested_as_json
from engines.base import Engine, Variant
from engines.context import RunContext
from engines.errors import describe_error, error_text
from engines.infra.artifacts import fetch
from engines.infra.hudi_jars import hudi_bundle
from engines.infra.jdk import find_jdk
from engines.spark.runtime import SPARK_JAVA_VERSIONS, SparkRuntime
from harness.report.junit import case_id
from harness.results.expectations import from_records
from harness.results.outcomes import Cell, Outcome
from harness.results.store import ResultsError, load_run
from harness.run import folder as run_folder
from harness.run.cells import judge, measure
from harness.run.fleet import EngineState, Fleet
from harness.run.progress import Progress
from harness.scenario import oracle
from harness.scenario.compare import data_columns
from harness.scenario.load import load_scenarios
from harness.scenario.model import Scenario
from harness.writer import create_writer
from harness.writer.base import WriteResult
from harness.writer.hudi.script import default_path

#: Rows of each table shown in ISSUE.md (the CSV files hold them all).
SHOWN_ROWS = 20
#: Seconds `spark-submit writer.py` may take.
SCRIPT_TIMEOUT = 900


@dataclass
class Reproduction:
    """What `reproduce` made and found."""

    folder: Path
    cell: Cell
    #: The cell measured again on a freshly written table.
    again: Cell
    #: Whether writer.py made the table lakecompat's writer made (rows and schema).
    same_table: bool
    table_check: str
    #: The cell judged on the answer the reader files give (None: no such answer, e.g. an
    #: engine without the query type, or a writer that stopped).
    from_files: Cell | None = None

    @property
    def reproduced(self) -> bool:
        """The cell measured again, and the reader files' answer, judge as the run did."""
        want = (self.cell.outcome, self.cell.reason)
        if (self.again.outcome, self.again.reason) != want:
            return False
        return self.from_files is None or (self.from_files.outcome, self.from_files.reason) == want


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
    out: Path,
    scenarios_dir: Path,
    progress: Progress | None = None,
) -> Reproduction:
    """Write the reproduction folder of one cell of the run in `run_dir` (see the module)."""
    progress = progress or Progress()
    info, cells = load_run(run_dir)
    cell = find_cell(cells, cell_id, run_dir)
    scenario = _scenario(scenarios_dir, cell.scenario)
    hudi = cell.writer["hudi"]
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    runtime = SparkRuntime(work / "logs", hudi)
    context = RunContext(work, runtime)
    writer = create_writer(runtime, work / "tables")
    script = out / "writer.py"
    script.write_text(writer.script(scenario, cell.table_type), encoding="utf-8")
    engine: Engine | None = None
    try:
        progress.stage(f"writing {scenario.id} ({cell.table_type}) with lakecompat's writer")
        written = writer.write(scenario, cell.table_type)
        progress.stage("running writer.py with spark-submit, and comparing the two tables")
        same, check = _check_script(runtime, script, work, written)
        progress.stage(f"starting {cell.engine}")
        engine = _engine(cell, context, hudi)
        state = EngineState(engine)
        try:
            engine.start()
        except Exception as exc:  # noqa: BLE001 - the cell says so, as in a run
            state.failure = f"could not start: {exc}"
        variant = Variant(cell.variant, dict(cell.settings))
        progress.stage(f"reading with {cell.engine} ({cell.variant})")
        fleet = Fleet(progress, 300, threading.Event())
        again = read_again(fleet, scenario, written, state, cell, writer.versions)
        files = _reader_files(engine, written, cell, variant) if written.ok else {}
        answer, from_files = None, None
        if files and not state.failure:
            progress.stage(f"running the reader files with {cell.engine}")
            answer, from_files = _run_files(engine, files, cell, scenario, written)
        table_path = default_path(scenario.id, cell.table_type)
        for name, text in files.items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text.replace(str(written.table.path), table_path), encoding="utf-8")
        expected = _expected(scenario, cell, engine)
        key = scenario.spec.key
        _write_csv(out / "expected.csv", expected, key)
        if isinstance(answer, pa.Table):
            _write_csv(out / "actual.csv", answer, key)
        elif answer is not None:
            (out / "actual-error.txt").write_text(answer + "\n", encoding="utf-8")
        result = Reproduction(out, cell, again, same, check, from_files)
        _write_issue(result, info, scenario, files, expected, answer)
        return result
    finally:
        if engine is not None:
            engine.stop()
        writer.close()
        context.close()
        run_folder.clean(work, keep_tables=False)
        run_folder.clear_service_state(work)
        for scratch in ("script-table", "script-warehouse"):
            shutil.rmtree(work / scratch, ignore_errors=True)


def read_again(
    fleet: Fleet,
    scenario: Scenario,
    written: WriteResult,
    state: EngineState,
    cell: Cell,
    writer: dict[str, str],
) -> Cell:
    """The cell measured again as a run measures it: the table registered with the engine,
    then the cell's query type read with the settings the cell recorded."""
    registered = fleet.register(state, written)
    variant = Variant(cell.variant, dict(cell.settings))
    return measure(fleet, scenario, written, state, cell.query_type, variant, writer, registered)


def _scenario(root: Path, scenario_id: str) -> Scenario:
    found = [s for s in load_scenarios(root, scenario_id) if s.id == scenario_id]
    if not found:
        raise ResultsError(
            f"{root}: no scenario {scenario_id!r}; give the folder the run read its scenarios "
            "from with --scenario-dir"
        )
    return found[0]


def _engine(cell: Cell, context: RunContext, writer_hudi: str) -> Engine:
    """The cell's engine, reading with the Hudi release the cell's reader read with."""
    cls = engine_class(cell.engine)
    reader_hudi = cell.reader_hudi if cell.reader_hudi not in ("", writer_hudi) else None
    return cls(context, reader_hudi)


def _check_script(
    runtime: SparkRuntime, script: Path, work: Path, written: WriteResult
) -> tuple[bool, str]:
    """Run writer.py with spark-submit into a folder of its own; whether its table equals
    the one lakecompat's writer made (data columns: names, types and every row)."""
    target = work / "script-table" / written.table.name
    log = work / "logs" / "writer-script.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    done = _spark_submit(script, target, runtime.hudi_version, work, log)
    if not written.ok:
        if done.returncode != 0:
            return True, f"like lakecompat's writer, writer.py stops at {written.failed_at}"
        return (
            False,
            f"writer.py ran through, but lakecompat's writer stopped at {written.failed_at}",
        )
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        return False, f"writer.py failed (exit code {done.returncode}):\n{tail}"
    session = runtime.session()
    ours, theirs = (
        session.read.format("hudi").load(str(path)) for path in (written.table.path, target)
    )
    names = [f.name for f in ours.schema.fields if not f.name.startswith("_hoodie_")]
    schema = [(f.name, f.dataType.simpleString()) for f in ours.schema.fields if f.name in names]
    other = [(f.name, f.dataType.simpleString()) for f in theirs.schema.fields]
    other = [column for column in other if not column[0].startswith("_hoodie_")]
    if schema != other:
        return False, f"writer.py's table has the columns {other}, lakecompat's writer's {schema}"
    rows, their_rows = (
        sorted(map(repr, frame.select(*names).collect())) for frame in (ours, theirs)
    )
    if rows != their_rows:
        missing = sorted(set(rows) - set(their_rows))[:3]
        extra = sorted(set(their_rows) - set(rows))[:3]
        return False, f"the rows differ: only lakecompat's {missing}; only writer.py's {extra}"
    return True, f"writer.py makes the same table: {len(rows)} rows, columns {schema}"


def _spark_submit(
    script: Path, target: Path, hudi: str, work: Path, log: Path
) -> subprocess.CompletedProcess[bytes]:
    """`spark-submit writer.py TARGET` with PySpark's own Spark and the cached Hudi bundle,
    every socket on 127.0.0.1."""
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    jar = fetch(hudi_bundle(hudi))
    env = {
        **os.environ,
        "JAVA_HOME": str(find_jdk(SPARK_JAVA_VERSIONS, "Spark 3.5").home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    }
    argv = [
        str(submit),
        *("--master", "local[2]", "--jars", str(jar)),
        *("--driver-java-options", "-Duser.timezone=UTC"),
        *("--conf", "spark.ui.enabled=false"),
        *("--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1"),
        *("--conf", f"spark.sql.warehouse.dir={work / 'script-warehouse'}"),
        str(script),
        str(target),
    ]
    with log.open("wb") as output:
        return subprocess.run(
            argv,
            cwd=work,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=SCRIPT_TIMEOUT,
            check=False,
        )


def _reader_files(
    engine: Engine, written: WriteResult, cell: Cell, variant: Variant
) -> dict[str, str]:
    try:
        return engine.reproduction(written.table, cell.query_type, variant)
    except Exception as exc:  # noqa: BLE001 - a read that cannot even be spelled is the finding
        return {"reader.sql": f"-- {cell.engine}: no SQL for this read: {exc}\n"}


def _run_files(
    engine: Engine, files: dict[str, str], cell: Cell, scenario: Scenario, written: WriteResult
) -> tuple[Any, Cell | None]:
    """Run the query the reader files spell out, as they spell it: the engine's whole answer
    (an Arrow table) or its error text, and the cell judged on it (None where the engine
    lacks the query type: that cell's reason is not about an answer)."""
    sql, variant = engine.reproduction_query(files)
    judged = copy.deepcopy(cell)
    supported = engine.supports(cell.table_type, cell.query_type)
    try:
        answer = engine.query(sql, variant)
    except Exception as exc:  # noqa: BLE001 - the error is the answer
        judged.outcome, judged.reason = Outcome.ERROR, describe_error(exc)
        return error_text(exc, lines=40, limit=8000), judged if supported else None
    if not supported:
        return answer, None
    last = written.table.partition_by if engine.partition_columns_last else ()
    return answer, judge(judged, scenario, written.table, cell.query_type, answer, sql, last)


def _expected(scenario: Scenario, cell: Cell, engine: Engine) -> pa.Table:
    """The oracle's table, its columns in the order the engine lists them."""
    expected = oracle.expected(scenario.spec, cell.table_type, cell.query_type)
    last = scenario.spec.partition_by if engine.partition_columns_last else []
    names = expected.column_names
    return expected.select([n for n in names if n not in last] + [n for n in last if n in names])


def _shown(table: pa.Table, key: str) -> pa.Table:
    """The data columns, nested values as JSON text, sorted by the key where it is there."""
    shown = nested_as_json(data_columns(table))
    if key in shown.column_names:
        with contextlib.suppress(pa.ArrowException):
            shown = shown.sort_by(key)
    return shown


def _write_csv(path: Path, table: pa.Table, key: str) -> None:
    """Data columns as CSV; nested values as JSON text, missing values as empty fields."""
    shown = _shown(table, key)
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(shown.column_names)
        for row in shown.to_pylist():
            out.writerow(["" if v is None else _text(v) for v in row.values()])


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def _markdown(table: pa.Table, key: str) -> str:
    shown = _shown(table, key)
    rows = shown.to_pylist()[:SHOWN_ROWS]
    head = "| " + " | ".join(shown.column_names) + " |\n"
    head += "|" + "---|" * len(shown.column_names) + "\n"
    body = "".join(
        "| " + " | ".join("NULL" if v is None else _text(v) for v in row.values()) + " |\n"
        for row in rows
    )
    more = (
        f"\n({shown.num_rows - SHOWN_ROWS} more rows in the CSV file)\n"
        if shown.num_rows > SHOWN_ROWS
        else ""
    )
    return head + body + more


def _known(info: dict[str, Any], cell: Cell) -> dict[str, Any] | None:
    """The known outcome that matched the cell in its run, if any."""
    records = info.get("known") or []
    for record, entry in zip(records, from_records(records), strict=True):
        if entry.matches(cell):
            return record
    return None


def _write_issue(
    result: Reproduction,
    info: dict[str, Any],
    scenario: Scenario,
    files: dict[str, str],
    expected: pa.Table,
    answer: Any,
) -> None:
    """ISSUE.md (a draft for the engine's or Hudi's tracker) and repro.json."""
    cell, again = result.cell, result.again
    bundle = hudi_bundle(cell.writer["hudi"])
    coordinates = f"{bundle.group}:{bundle.artifact}:{bundle.version}"
    known = _known(info, cell)
    reader = f"{cell.engine} {cell.engine_version}"
    if cell.reader_hudi:
        reader += f" (reading with Hudi {cell.reader_hudi}'s jars)"
    settings = ", ".join(f"`{k}={v}`" for k, v in cell.settings.items()) or "none"
    steps = ", ".join(step.op for step in scenario.spec.steps)
    first_line = cell.reason.splitlines()[0] if cell.reason else cell.outcome.value
    lines = [
        f"# {cell.engine} {cell.engine_version}: {cell.query_type} query of a Hudi "
        f"{cell.table_type.upper()} table after {scenario.spec.title.lower()} gives "
        f"{cell.outcome.value}",
        "",
        "## Environment",
        "",
        f"- Writer: Spark {cell.writer['spark']} with `{coordinates}`",
        f"- Reader: {reader}; settings: {settings}",
        f"- Found by lakecompat (cell `{case_id(cell)}`, run `{info.get('run_id', '?')}`)",
        "",
        "## Steps",
        "",
        "1. Write the table (the seed rows, then: " + steps + "):",
        "",
        "   ```sh",
        f"   spark-submit --packages {coordinates} \\",
        "       --driver-java-options -Duser.timezone=UTC writer.py",
        "   ```",
    ]
    number = 2
    if any(name.startswith("register") for name in files):
        lines += ["", f"{number}. Register it as Hudi's hive sync does: `register.hql`."]
        number += 1
    if any(name.startswith("etc/") for name in files):
        lines += [
            "",
            f"{number}. Configure the catalogs: `etc/catalog/*.properties` (set the Metastore's "
            "address).",
        ]
        number += 1
    readers = [n for n in files if n.startswith("reader")]
    lines += ["", f"{number}. Read it: `{'`, `'.join(readers)}`."]
    if cell.query_type in ("incremental", "time_travel"):
        lines += [
            "",
            "   The query names a commit time of the table lakecompat wrote (the commit before "
            "the first schema change); a table written again has commits of its own: take "
            "the time from the table's timeline (`.hoodie/timeline/` in Hudi 1.x).",
        ]
    lines += ["", "## Expected", "", "The table as the scenario defines it (`expected.csv`):", ""]
    key = scenario.spec.key
    lines += [_markdown(expected, key)]
    lines += ["## Actual", "", f"{cell.outcome.value}: {first_line}", ""]
    if isinstance(answer, pa.Table):
        lines += ["The engine's answer (`actual.csv`):", "", _markdown(answer, key)]
    elif answer is not None:
        lines += ["```", answer, "```", ""]
    lines += ["## Known outcome", ""]
    if known:
        link = f" ({known['link']})" if known.get("link") else ""
        lines += [f"{known['outcome']}: {known['reason']}{link}", ""]
    else:
        lines += ["None: the run expected this cell to pass.", ""]
    status = "reproduced" if result.reproduced else "NOT reproduced"
    lines += [
        "## Checked by `lakecompat repro`",
        "",
        f"- On {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC the cell was measured again on a "
        f"newly written table: {again.outcome.value}"
        + (f" ({again.reason.splitlines()[0]})" if again.reason else "")
        + f": {status}.",
        f"- {_files_line(result)}",
        f"- {result.table_check.splitlines()[0]}",
        "",
    ]
    (result.folder / "ISSUE.md").write_text("\n".join(lines), encoding="utf-8")
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
        "same_table": result.same_table,
        "table_check": result.table_check,
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
        f"  {result.table_check.splitlines()[0]}",
    ]
    return "\n".join(lines)
