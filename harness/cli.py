"""The `lakecompat` command line."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import Any

from engines import UnknownEngineError, known_engines
from engines.attached import Attachments, warehouse_folder
from engines.infra.artifacts import ProvisioningError
from harness.report.junit import case_id
from harness.report.summary import verdict_counts
from harness.results.expectations import (
    ExpectationError,
    Judged,
    Verdict,
    exit_status,
    load_expectations,
)
from harness.results.outcomes import summary_line
from harness.results.store import ResultsError
from harness.run.options import DEFAULT_ENGINES, RunResult
from harness.scenario.load import ScenarioError, load_scenarios
from harness.scenario.model import TABLE_TYPES
from harness.writer.layout import needs

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIOS = PROJECT_ROOT / "scenarios"
DEFAULT_EXPECTATIONS = PROJECT_ROOT / "expectations"
DESCRIPTION = """\
lakecompat writes Apache Hudi tables with Spark, changes their schema the way data teams do
(add, drop, rename, retype columns), reads them back with each query engine and compares every
answer with the expected table. The result is a compatibility matrix: one cell per scenario,
table type, query type and engine, each with an outcome, a reason and the evidence.

Outcomes: PASS (answer correct), WRONG (answer incorrect; the reason says how), ERROR (the
engine raised), REJECTED (the writer refused the schema change), UNSUPPORTED (the engine has
no such query type), ENGINE_FAILED (the engine could not read even a plain Parquet table).
"""
EXIT_CODES = """\
Known outcomes: files expectations/*.yaml say which cells are known not to pass, and why.
Every cell is judged against them: "as expected", "regression" (it does not pass and that is
not known), or "fixed upstream" (known not to pass, and now passes). Reports list regressions
and fixed-upstream cells first.

exit codes:
  0  every cell is as expected (with --strict: and none is fixed upstream)
  1  regressions (with --strict: also cells fixed upstream); the reports name them
  2  bad input (scenario or expectation file, engine name), the harness failed, or an
     engine failed (a cell is ENGINE_FAILED)
  130  interrupted (finished cells are kept in the run folder)
"""


_SETTING = re.compile(r"^([a-z][a-z0-9_-]*):([A-Za-z0-9_.\-]+)=([A-Za-z0-9_.,:/\-]*)$")


def _setting(value: str) -> tuple[str, str, str]:
    """`ENGINE:KEY=VALUE`, restricted to characters that are safe in a SET statement."""
    match = _SETTING.match(value.strip())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not ENGINE:KEY=VALUE (e.g. spark:hoodie.schema.on.read.enable=true; "
            "keys and values may use letters, digits and . _ - , : /)"
        )
    engine, key, setting = match.groups()
    return engine, key, setting


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1
    if not 0 <= seconds <= 86_400:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds from 0 to 86400")
    return seconds


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lakecompat",
        description=DESCRIPTION,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run the matrix and write reports/latest/",
        description="Write every selected scenario as a Hudi table, read it with every engine, "
        "and write the run folder (reports/runs/<id>/) and reports/latest/.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _scenario_options(run)
    run.add_argument(
        "--engines",
        type=_csv,
        default=DEFAULT_ENGINES,
        help=f"comma-separated engines to read with (known: {', '.join(known_engines())}; "
        f"default: {','.join(DEFAULT_ENGINES)})",
    )
    run.add_argument(
        "--table-types",
        type=_csv,
        default=TABLE_TYPES,
        help="comma-separated Hudi table types: cow (copy-on-write), mor (merge-on-read); "
        "default: cow,mor",
    )
    _reports_option(run, "folder for run folders and latest/ (default: ./reports)")
    run.add_argument(
        "--hudi-version",
        help="Hudi release to write with (default: $LAKECOMPAT_HUDI_VERSION or 1.2.0)",
    )
    run.add_argument(
        "--hive-hudi-version",
        metavar="VERSION",
        help="Hudi release whose jars HiveServer2 reads with, when it is not the writer's "
        "(version skew: e.g. the writer on 1.2.0, Hive still on 0.15.0)",
    )
    run.add_argument(
        "--spark-hudi-version",
        metavar="VERSION",
        help="Hudi release the Spark reader reads with, when it is not the writer's (version "
        "skew: e.g. the writer on 1.2.0, a Spark job still on 0.15.0); it runs in a Spark "
        "of its own",
    )
    run.add_argument(
        "--query-timeout",
        type=_seconds,
        default=300,
        metavar="SECONDS",
        help="kill and restart an engine whose query runs longer; the cell is ERROR "
        "'timeout after N s' (default: 300; 0: no limit)",
    )
    run.add_argument(
        "--step-timeout",
        type=_seconds,
        default=900,
        metavar="SECONDS",
        help="kill and restart Spark when one writer step runs longer; the table's cells are "
        "ERROR (default: 900; 0: no limit)",
    )
    run.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep the Hudi tables in the run folder (tables/) after the run; by default they "
        "are deleted with the engines' scratch data once the reports are written",
    )
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="complete an interrupted run: run only its missing cells, with the options it was "
        "started with (scenarios, engines, table types, settings, known outcomes), into the "
        "same folder",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N shares of the tables (scenario x table type), the same "
        "share on every machine for the same options; the baselines run in every shard. "
        "Merge the N run folders with `lakecompat merge`",
    )
    run.add_argument(
        "--shard-costs",
        type=Path,
        metavar="FILE",
        help="balance the shards by the seconds each table took in an earlier run: its "
        "costs.json (or its run folder); default: an estimate from steps and cells",
    )
    run.add_argument(
        "--set",
        dest="settings",
        type=_setting,
        action="append",
        default=[],
        metavar="ENGINE:KEY=VALUE",
        help="a reader setting for every variant of one engine (Spark conf, Hive SET, Trino "
        "session property), e.g. spark:hoodie.schema.on.read.enable=true; repeatable. Compare "
        "the run with another using `lakecompat diff`",
    )
    _judging_options(
        run,
        "default: the project's expectations/ when the project's scenarios run, else none",
    )
    run.add_argument("--quiet", action="store_true", help="no progress output, only the summary")
    _attach_options(run)
    listing = commands.add_parser("scenarios", help="validate and list the scenario files")
    _scenario_options(listing)
    report = commands.add_parser(
        "report",
        help="re-render the reports of a run folder from its results file",
        description="Render results.json, matrix.md, matrix.html, junit.xml and summary.md "
        "from a run folder. The exit code judges the run like `lakecompat run` does.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a reports/runs/<id> folder")
    report.add_argument(
        "--out",
        type=Path,
        help="where to write the reports (default: RUN_DIR)",
    )
    _judging_options(report, "default: the known outcomes recorded in RUN_DIR")
    known = commands.add_parser(
        "known",
        help="draft known outcomes from a run (accept its results as the baseline)",
        description="Print an expectations file under which every cell of the run is as "
        "expected: the fewest entries, each naming engine, scenario, table type, query type and "
        "variant only as far as needed. Review the reasons, add upstream links, and save it "
        "under expectations/. Given runs at several version points (e.g. the points of "
        "`lakecompat qualify`), entries that hold at one point only are scoped to its "
        "releases (hudi, reader_hudi, versions) and listed first. With --against, only what "
        "the reviewed known outcomes misjudge is drafted: the entries a version point needs "
        "on top of them.",
    )
    known.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        metavar="RUN",
        help="run folder or results.json; several: one per version point",
    )
    known.add_argument("--out", type=Path, help="write the file here instead of printing it")
    known.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="folder of reviewed known-outcome files (e.g. expectations/): draft only the "
        "entries each run needs before them, scoped to the run's Hudi release",
    )
    merge = commands.add_parser(
        "merge",
        help="make one run folder from the run folders of a sharded run",
        description="Merge the run folders of the N shards of one run (`lakecompat run "
        "--shard K/N`) into a new run folder under --reports, with every report as if one "
        "run had measured every cell. Refuses shards of different runs, a shard given twice, "
        "a missing shard and an unfinished one (complete it with `lakecompat run --resume`). "
        "The exit code judges the merged run like `lakecompat run` does.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    merge.add_argument(
        "shard_dirs", type=Path, nargs="+", metavar="RUN", help="the run folder of every shard"
    )
    _reports_option(merge, "folder for the merged run folder and latest/ (default: ./reports)")
    merge.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        help=f"folder of the scenario files the shards ran (default: {DEFAULT_SCENARIOS})",
    )
    merge.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when a known failure now passes (fixed upstream); the known outcomes "
        "are those the shards recorded",
    )
    repro = commands.add_parser(
        "repro",
        help="write a reproduction of one cell, for an upstream bug report",
        description="Write a folder that reproduces one cell without lakecompat: writer.py "
        "(the table, as a PySpark script for spark-submit), the engine's registration, "
        "settings and SQL, expected.csv (the oracle) and actual.csv (the engine's answer), "
        "and ISSUE.md, a draft bug report. The table is written again, writer.py is run and "
        "compared with it, and the cell is measured again; repro.json and ISSUE.md say "
        "whether it reproduced. Exit code 0: reproduced and writer.py makes the same table; "
        "1: not; 2: bad input.",
    )
    repro.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a reports/runs/<id> folder")
    repro.add_argument(
        "cell_id",
        metavar="CELL_ID",
        help="the cell's id as in junit.xml and the HTML report, e.g. "
        "trino.cow.snapshot.rename_column/rename[column_names]",
    )
    repro.add_argument(
        "--out", type=Path, help="folder to write (default: RUN_DIR/repro/<cell id>)"
    )
    repro.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        help=f"the folder of scenario files the run used (default: {DEFAULT_SCENARIOS})",
    )
    repro.add_argument("--quiet", action="store_true", help="no progress output")
    explore = commands.add_parser(
        "explore",
        help="generate evolution sequences, and shrink each failure to the smallest sequence",
        description="Generate random but valid evolution sequences (column changes, writes, "
        "deletes, compaction and clustering; both table types) with Hypothesis, run them like "
        "scenarios, and shrink every failure to the smallest sequence that still fails the "
        "same way (engine, outcome and reason class). Writes one scenario file per failure "
        "signature (OUT/scenarios/explored/*.yaml, ready for the catalog) and explore.md, "
        "which says which signatures a catalog run already has. The same seed and options "
        "generate the same sequences.",
    )
    explore.add_argument(
        "--budget",
        type=_duration,
        default=600,
        metavar="TIME",
        help="how long to explore, e.g. 20m, 90s, 1h (default: 10m)",
    )
    explore.add_argument(
        "--engines",
        type=_csv,
        default=DEFAULT_ENGINES,
        help=f"comma-separated engines to read with (default: {','.join(DEFAULT_ENGINES)})",
    )
    explore.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    explore.add_argument(
        "--out",
        type=Path,
        help="folder to write (default: REPORTS/explore/<UTC time>)",
    )
    explore.add_argument(
        "--catalog-run",
        type=Path,
        metavar="RUN",
        help="a run of the catalog (run folder, or reports/latest) whose failures count as "
        "covered (default: REPORTS/latest if it exists)",
    )
    explore.add_argument(
        "--max-examples",
        type=int,
        default=200,
        help="sequences a round may generate before it gives up finding a new failure "
        "(default: 200)",
    )
    explore.add_argument(
        "--query-timeout", type=_seconds, default=120, metavar="SECONDS", help="(default: 120)"
    )
    _reports_option(explore, "folder of reports (default: ./reports)")
    explore.add_argument("--quiet", action="store_true", help="no progress output")
    diff = commands.add_parser(
        "diff",
        help="list the cells whose outcome changed between two runs",
        description="Compare two runs cell by cell (matched by engine, table type, query type, "
        "scenario and variant; versions are ignored, so runs before and after an upgrade line "
        "up) and print the cells whose outcome changed, appeared or disappeared.",
    )
    diff.add_argument(
        "old", type=Path, metavar="OLD", help="run folder, reports folder or results.json"
    )
    diff.add_argument(
        "new", type=Path, metavar="NEW", help="run folder, reports folder or results.json"
    )
    diff.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    _qualify_parser(commands)
    return parser


QUALIFY_EPILOG = """\
examples:
  lakecompat qualify --versions versions/hudi-1.1-to-1.2.yaml
  lakecompat qualify --point old:hudi=1.1.1 --point new:hudi=1.2.0 --scenarios 'rename_column/*'
  lakecompat qualify --versions versions/readers-lag-writer-1.2.yaml   # readers on older jars
  lakecompat qualify reports/runs/20261101-120000 reports/runs/20261123-120000

A version point may set: hudi (the release Spark writes with), hive_hudi (the Hudi jars
HiveServer2 reads with; default: the writer's), spark_hudi (the Hudi release the Spark reader
reads with; default: the writer's), trino, hive. A field a point leaves out keeps
the default release. Points that differ only in hive_hudi and spark_hudi share one run: the
tables are written once and each distinct reader reads them once.

exit codes:
  0  the candidate breaks no cell that passed on the baseline
  1  the candidate breaks at least one such cell (listed first in the reports)
  2  bad input (versions file, point, run folder), or the harness failed
  130  interrupted
"""


def _qualify_parser(commands: argparse._SubParsersAction) -> None:
    qualify = commands.add_parser(
        "qualify",
        help="qualify an upgrade: run two or more version points and compare them",
        description="Run the matrix at each version point (from --versions or --point), or "
        "take two finished runs, and compare the baseline with the candidate cell by cell. "
        "Writes qualify.md, qualify.html, qualify.json and qualify-junit.xml: the cells the "
        "candidate breaks first, then those it fixes, then the failures on both.",
        epilog=QUALIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    qualify.add_argument(
        "runs",
        nargs="*",
        type=Path,
        metavar="RUN",
        help="two run folders (or results.json files) to compare, baseline first, instead of "
        "running version points",
    )
    qualify.add_argument(
        "--versions", type=Path, metavar="FILE", help="a versions file (see versions/*.yaml)"
    )
    qualify.add_argument(
        "--point",
        dest="points",
        action="append",
        default=[],
        metavar="NAME:KEY=VERSION,...",
        help="a version point, e.g. old:hudi=1.1.1 (repeat; the first is the baseline, the "
        "last the candidate)",
    )
    _scenario_options(qualify)
    qualify.add_argument(
        "--engines",
        type=_csv,
        default=DEFAULT_ENGINES,
        help=f"comma-separated engines to read with (default: {','.join(DEFAULT_ENGINES)})",
    )
    qualify.add_argument(
        "--table-types", type=_csv, default=TABLE_TYPES, help="cow and/or mor (default: both)"
    )
    _reports_option(
        qualify,
        "folder for the points' runs (points/<name>/) and the qualification (qualify/); "
        "default: ./reports",
    )
    qualify.add_argument(
        "--expectations",
        type=Path,
        metavar="DIR",
        help="known outcomes for each point's own reports (default: the project's "
        "expectations/ when the project's scenarios run, else none); the qualification itself "
        "compares the points with each other",
    )
    qualify.add_argument(
        "--out", type=Path, help="where to write the qualification files (default: REPORTS/qualify)"
    )
    qualify.add_argument("--quiet", action="store_true", help="no progress output")


def _reports_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--reports", type=Path, default=Path("reports"), help=help_text)


def _judging_options(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--expectations",
        type=Path,
        metavar="DIR",
        help=f"folder of known-outcome files (*.yaml) to judge the cells against; {default}",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when a known failure now passes (fixed upstream), so the "
        "expectations get updated",
    )


def _scenario_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenarios",
        metavar="PATTERN",
        help="comma-separated globs over scenario ids, e.g. 'rename_column/*' "
        "(an id is the file path below the scenario folder, without .yaml)",
    )
    parser.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        help=f"folder of scenario files (default: {DEFAULT_SCENARIOS})",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM (a CI job cancelled, `kill`) stops the run like Ctrl-C: services are stopped and
    # finished cells kept, so `--resume` can complete the run.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _dispatch(args)
    except (
        ScenarioError,
        ExpectationError,
        UnknownEngineError,
        ProvisioningError,
        ResultsError,
        ValueError,
    ) as exc:
        print(f"lakecompat: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "lakecompat: interrupted; finished cells are kept in the run folder "
            "(complete it with `lakecompat run --resume RUN_DIR`)",
            file=sys.stderr,
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "scenarios":
        scenarios = load_scenarios(args.scenario_dir, args.scenarios)
        for scenario in scenarios:
            types = ",".join(scenario.spec.table_types)
            required = ",".join(needs(scenario.spec)) or "-"
            print(f"{scenario.id:<40} {types:<8} {required:<19} {scenario.spec.title}")
        print(f"{len(scenarios)} scenario(s), all valid")
        return 0
    if args.command == "diff":
        from harness.report.diff import diff_cells, render_json, render_markdown
        from harness.results.store import load_cells

        _, old = load_cells(args.old)
        _, new = load_cells(args.new)
        render = render_json if args.json else render_markdown
        print(render(diff_cells(old, new), str(args.old), str(args.new)), end="")
        return 0
    if args.command == "qualify":
        return _qualify(args)
    if args.command == "explore":
        return _explore(args)
    if args.command == "repro":
        from harness.repro.reproduce import default_folder, reproduce, summary
        from harness.run.progress import Progress

        out = args.out or default_folder(args.run_dir, args.cell_id)
        made = reproduce(
            args.run_dir, args.cell_id, out, args.scenario_dir, Progress(quiet=args.quiet)
        )
        print(summary(made))
        return 0 if made.reproduced and made.same_table else 1
    if args.command == "known":
        from harness.results.known_draft import draft_known_across, draft_on_top, to_yaml
        from harness.results.store import load_cells

        runs = [load_cells(path)[1] for path in args.run_dirs]
        if args.against:
            reviewed = load_expectations(args.against)
            text = to_yaml([e for cells in runs for e in draft_on_top(cells, reviewed)])
        else:
            text = to_yaml(draft_known_across(runs))
        if args.out:
            args.out.write_text(text, encoding="utf-8")
            print(f"wrote {args.out}")
        else:
            print(text, end="")
        return 0
    if args.command == "merge":
        from harness.run.merge import merge

        run_dir, judged = merge(args.shard_dirs, args.reports, args.scenario_dir)
        cells = [j.cell for j in judged]
        print(f"merged {len(args.shard_dirs)} shards: {summary_line(cells)}")
        print(f"report: {args.reports / 'latest' / 'matrix.html'}  run: {run_dir}")
        return _judgement(judged, args.strict)
    if args.command == "report":
        from harness.report.render import REPORT_FILES, write_reports

        known = load_expectations(args.expectations) if args.expectations else None
        out = args.out or args.run_dir
        judged = write_reports(args.run_dir, [out], known)
        print(f"wrote {', '.join(REPORT_FILES)} to {out}")
        return _judgement(judged, args.strict)
    return _run(args)


def _attach_options(run: argparse.ArgumentParser) -> None:
    """The options that attach engines a user already runs (see the README)."""
    group = run.add_argument_group(
        "engines you already run",
        "Attach to running services instead of starting them. lakecompat never starts, stops "
        "or restarts them; it registers its tables in a database named after the run and drops "
        "it at the end (unless --keep-tables).",
    )
    group.add_argument(
        "--spark-master",
        metavar="spark://HOST:PORT",
        help="a Spark standalone master: the writer and the Spark reader run their jobs there "
        "(the driver runs here, on 127.0.0.1)",
    )
    group.add_argument(
        "--trino",
        metavar="URL",
        help="a Trino coordinator (http://HOST:PORT) with catalogs `hudi` and `hive` on the "
        "--metastore; needs --metastore",
    )
    group.add_argument(
        "--hiveserver2",
        metavar="HOST:PORT",
        help="a HiveServer2 (binary transport, NOSASL) with the writer's Hudi bundle on its "
        "classpath",
    )
    group.add_argument(
        "--hiveserver2-log",
        type=Path,
        metavar="FILE",
        help="the attached HiveServer2's log, where it is on this machine: a failed MapReduce "
        "job's cause is read from it (HiveServer2 tells clients only 'return code 2')",
    )
    group.add_argument(
        "--metastore",
        metavar="thrift://HOST:PORT",
        help="a Hive Metastore: the run registers its tables there, and engines lakecompat "
        "starts read it",
    )
    group.add_argument(
        "--warehouse",
        metavar="FOLDER",
        help="where the tables go (in <FOLDER>/<run id>-<random>/): a local folder or file: URI "
        "that every engine can read; default: the run folder's tables/",
    )


def _attachments(args: argparse.Namespace) -> Attachments:
    """The attachment options as given (checked by the runner)."""
    return Attachments(
        spark_master=args.spark_master,
        trino=args.trino,
        hiveserver2=args.hiveserver2,
        hiveserver2_log=args.hiveserver2_log.resolve() if args.hiveserver2_log else None,
        metastore=args.metastore,
        warehouse=warehouse_folder(args.warehouse) if args.warehouse else None,
    )


def _duration(text: str) -> float:
    """`20m`, `90s`, `1h` or plain seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 20m, 90s or 1h")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def _explore(args: argparse.Namespace) -> int:
    import datetime as dt

    from engines import engine_class
    from harness.explore.lab import Lab, explore, mark_covered, write_findings
    from harness.results.store import load_cells
    from harness.run import folder as run_folder
    from harness.run.progress import Progress

    for name in args.engines:
        engine_class(name)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = (args.out or args.reports / "explore" / stamp).resolve()
    catalog = args.catalog_run or (args.reports / "latest")
    if args.catalog_run and not catalog.exists():
        raise ValueError(f"--catalog-run {catalog}: not found")
    progress = Progress(quiet=args.quiet)
    lab = Lab(out / "work", tuple(args.engines), progress, args.query_timeout)
    try:
        with lab.running():
            result = explore(lab, args.budget, args.seed, args.max_examples)
    finally:
        run_folder.clean(out / "work", keep_tables=False)
    if catalog.exists():
        mark_covered(result, load_cells(catalog)[1])
    paths = write_findings(result, out)
    new = sum(1 for f in result.findings.values() if f.covered is False)
    print(
        f"explored {result.examples} sequences in {result.seconds:.0f} s: "
        f"{len(paths)} failure signature(s)"
        + (f", {new} not in the catalog run {catalog}" if catalog.exists() else "")
    )
    print(f"report: {out / 'explore.md'}  scenarios: {out / 'scenarios' / 'explored'}")
    if result.interrupted:
        print("lakecompat: explore was interrupted; what it had found is written", file=sys.stderr)
        return 130
    return 0


def _engine_settings(settings: list[tuple[str, str, str]]) -> dict[str, dict[str, str]]:
    grouped: dict[str, dict[str, str]] = {}
    for engine, key, value in settings:
        grouped.setdefault(engine, {})[key] = value
    return grouped


def _expectations_dir(args: argparse.Namespace) -> Path | None:
    """The given folder; the project's own for the project's scenarios; else none."""
    if args.expectations:
        return args.expectations
    return DEFAULT_EXPECTATIONS if args.scenario_dir == DEFAULT_SCENARIOS else None


def _judgement(judged: list[Judged], strict: bool) -> int:
    """Print the verdicts and the regressions (a few), and return the exit code."""
    print(f"against the known outcomes: {verdict_counts(judged)}")
    for verdict in (Verdict.REGRESSION, Verdict.FIXED_UPSTREAM):
        rows = [j for j in judged if j.verdict is verdict]
        for row in rows[:10]:
            print(
                f"  {verdict.value}: {case_id(row.cell)}: {row.cell.outcome.value}"
                f" (expected {row.expected.value})"
            )
        if len(rows) > 10:
            print(f"  ... and {len(rows) - 10} more {verdict.value} cells (see summary.md)")
    return exit_status(judged, strict)


def _run(args: argparse.Namespace) -> int:
    from harness.run.folder import resume_options
    from harness.run.options import RunOptions
    from harness.run.progress import Progress
    from harness.run.runner import Runner
    from harness.run.shards import Shard

    if args.resume:
        if _attachments(args).any:
            raise ValueError(
                "--resume attaches to the services the run was started with (run.json's "
                "`attached`); do not give --spark-master, --trino, --hiveserver2, "
                "--hiveserver2-log, --metastore or --warehouse with it"
            )
        options = resume_options(args.resume, args.scenario_dir, args.reports)
        options.query_timeout, options.step_timeout = args.query_timeout, args.step_timeout
        options.keep_tables = args.keep_tables
        result = Runner(options, Progress(quiet=args.quiet)).run()
        return _finish(result, args)
    options = RunOptions(
        **_selection(args),
        hudi_version=args.hudi_version,
        hive_hudi_version=args.hive_hudi_version,
        spark_hudi_version=args.spark_hudi_version,
        engine_settings=_engine_settings(args.settings),
        query_timeout=args.query_timeout,
        step_timeout=args.step_timeout,
        keep_tables=args.keep_tables,
        shard=Shard.parse(args.shard) if args.shard else None,
        shard_costs=args.shard_costs,
        attachments=_attachments(args),
    )
    if args.shard_costs and not args.shard:
        raise ValueError("--shard-costs balances shards: give --shard K/N too")
    result = Runner(options, Progress(quiet=args.quiet)).run()
    return _finish(result, args)


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    """The run options `run` and `qualify` share: which cells, where reports go, judged how."""
    unknown = [t for t in args.table_types if t not in TABLE_TYPES]
    if unknown:
        raise ValueError(f"unknown table type {unknown[0]!r}; use cow and/or mor")
    return {
        "scenarios_dir": args.scenario_dir,
        "pattern": args.scenarios,
        "engines": args.engines,
        "table_types": args.table_types,
        "reports_dir": args.reports,
        "expectations_dir": _expectations_dir(args),
    }


def _finish(result: RunResult, args: argparse.Namespace) -> int:
    latest = args.reports / "latest"
    print(summary_line(result.cells))
    print(f"report: {latest / 'matrix.html'} (and matrix.md)  run: {result.run_dir}")
    return _judgement(result.judged, args.strict)


def _qualify(args: argparse.Namespace) -> int:
    from harness.qualify.compare import counts_line
    from harness.qualify.report import write_qualification
    from harness.qualify.run import compare_runs, run_points, selected
    from harness.qualify.versions import load_versions, parse_points
    from harness.run.options import RunOptions

    sources = [bool(args.runs), bool(args.versions), bool(args.points)]
    if sources.count(True) != 1:
        raise ValueError(
            "qualify needs exactly one of: two run folders, --versions FILE, or --point (twice)"
        )
    names: tuple[str, str] | None = None
    keep = None
    if args.runs:
        if len(args.runs) != 2:
            raise ValueError(f"qualify compares two runs; {len(args.runs)} given")
        baseline, candidate = args.runs
        chosen = _selection(args)
        keep = selected(chosen["pattern"], chosen["engines"], chosen["table_types"])
    else:
        plan = load_versions(args.versions) if args.versions else parse_points(args.points)
        runs = run_points(plan, RunOptions(**_selection(args)), args.quiet)
        base, cand = plan.baseline_point(), plan.candidate_point()
        baseline, candidate = runs[base.name].run_dir, runs[cand.name].run_dir
        names = (base.name, cand.name)
    result = compare_runs(baseline, candidate, names, keep)
    out = args.out or args.reports / "qualify"
    paths = write_qualification(result, out)
    print(f"{result.baseline.label()} -> {result.candidate.label()}")
    print(counts_line(result))
    print(f"qualification: {paths[0]} (and {', '.join(p.name for p in paths[1:])})")
    return 1 if result.breaks else 0
