"""The `lakecompat` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engines import UnknownEngineError, known_engines
from engines.artifacts import ProvisioningError
from harness.outcomes import summary_line
from harness.results import ResultsError
from harness.runner import DEFAULT_ENGINES
from harness.scenario import TABLE_TYPES, ScenarioError, load_scenarios

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIOS = PROJECT_ROOT / "scenarios"
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
exit codes:
  0  the run completed (whatever the outcomes; read the matrix)
  2  bad input (scenario file, engine name) or the harness could not start
  130  interrupted (finished cells are kept in the run folder)
"""


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
    run.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        help="folder for run folders and latest/ (default: ./reports)",
    )
    run.add_argument(
        "--hudi-version",
        help="Hudi release to write with (default: $LAKECOMPAT_HUDI_VERSION or 1.2.0)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress output, only the summary")
    listing = commands.add_parser("scenarios", help="validate and list the scenario files")
    _scenario_options(listing)
    report = commands.add_parser(
        "report", help="re-render the reports of a run folder from its results file"
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a reports/runs/<id> folder")
    report.add_argument(
        "--out",
        type=Path,
        help="where to write results.json, matrix.md and junit.xml (default: RUN_DIR)",
    )
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
    return parser


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
    try:
        return _dispatch(args)
    except (ScenarioError, UnknownEngineError, ProvisioningError, ResultsError, ValueError) as exc:
        print(f"lakecompat: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lakecompat: interrupted; finished cells are kept in the run folder", file=sys.stderr)
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "scenarios":
        scenarios = load_scenarios(args.scenario_dir, args.scenarios)
        for scenario in scenarios:
            types = ",".join(scenario.spec.table_types)
            print(f"{scenario.id:<40} {types:<8} {scenario.spec.title}")
        print(f"{len(scenarios)} scenario(s), all valid")
        return 0
    if args.command == "diff":
        from harness.diff import diff_cells, load_cells, render_json, render_markdown

        _, old = load_cells(args.old)
        _, new = load_cells(args.new)
        render = render_json if args.json else render_markdown
        print(render(diff_cells(old, new), str(args.old), str(args.new)), end="")
        return 0
    if args.command == "report":
        from harness.report import write_reports

        out = args.out or args.run_dir
        write_reports(args.run_dir, [out])
        print(f"wrote {out / 'matrix.md'}, {out / 'results.json'} and {out / 'junit.xml'}")
        return 0
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from harness.progress import Progress
    from harness.runner import Runner, RunOptions

    unknown = [t for t in args.table_types if t not in TABLE_TYPES]
    if unknown:
        raise ValueError(f"unknown table type {unknown[0]!r}; use cow and/or mor")
    options = RunOptions(
        scenarios_dir=args.scenario_dir,
        pattern=args.scenarios,
        engines=args.engines,
        table_types=args.table_types,
        reports_dir=args.reports,
        hudi_version=args.hudi_version,
    )
    result = Runner(options, Progress(quiet=args.quiet)).run()
    latest = args.reports / "latest"
    print(f"{summary_line(result.cells)}\nreport: {latest / 'matrix.md'}  run: {result.run_dir}")
    return 0
