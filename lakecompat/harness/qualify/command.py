"""`lakecompat qualify`: run two or more version points (or take two runs) and compare the
baseline with the candidate cell by cell."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lakecompat.engines.formats import FORMATS
from lakecompat.harness.options import (
    Command,
    Subcommands,
    csv,
    reports_option,
    scenario_options,
    table_cache_option,
)
from lakecompat.harness.qualify.compare import counts_line
from lakecompat.harness.qualify.report import write_qualification
from lakecompat.harness.results.store import ResultsError
from lakecompat.harness.run.command import selection, shapes_option
from lakecompat.harness.run.options import DEFAULT_FORMATS, RunOptions, readers_words
from lakecompat.harness.scenario.model import TABLE_TYPES

if TYPE_CHECKING:
    from lakecompat.harness.qualify.record import Record

EPILOG = """\
examples:
  lakecompat qualify --versions versions/hudi-1.1-to-1.2.yaml
  lakecompat qualify --versions versions/hudi-1.2-table-version-6.yaml   # reads with its engines:
                                                  # the default readers, Daft, Flink and Presto
  lakecompat qualify --versions versions/hudi-1.2-table-version-6.yaml --engines spark,presto \\
      --scenarios 'rename_column/*'               # the command line wins over the file
  lakecompat qualify --point old:hudi=1.1.1 --point new:hudi=1.2.0 --scenarios 'rename_column/*'
  lakecompat qualify --versions versions/readers-lag-writer-1.2.yaml   # readers on older jars
  lakecompat qualify --versions versions/iceberg-format-2-to-3.yaml   # Iceberg tables
  lakecompat qualify --resume reports/qualify     # complete an interrupted qualification
  lakecompat qualify reports/runs/20261101-120000 reports/runs/20261123-120000

A version point may set: hudi (the release Spark writes Hudi tables with), table_version,
hive_hudi (the Hudi jars HiveServer2 reads with; default: the writer's), spark_hudi (the Hudi
release the Spark reader reads with; default: the writer's), iceberg (the Iceberg release Spark
writes and reads Iceberg tables with), format_version (Iceberg's: 2 or 3), and the releases of
trino, hive, pyiceberg, polars, daft and hudi_rs. A field a point leaves out keeps the default
release. Points whose fields are Iceberg's qualify Iceberg tables (--formats to choose).
Points that differ only in hive_hudi and spark_hudi share one run: the tables are written once
and each distinct reader reads them once. Besides its points, a versions file may say which
engines (engines: [spark, presto]) and scenarios (scenarios: 'rename_column/*') it is meant
for; --engines and --scenarios win over it.

Before anything is fetched or started:
  - every release of every point is checked (Maven's or pip's list of releases, seconds): one
    that does not exist stops the qualification in one line naming the point and the field;
  - one line says what will run: points, runs, tables and cells a point, engines, formats.

Interrupted (Ctrl-C, SIGTERM): every finished cell is kept, and the message gives the command
that completes the qualification, `lakecompat qualify --resume FOLDER`. FOLDER is where the
qualification writes its reports (--out, default REPORTS/qualify); its qualification.json
records the points, the options and each point's run folder. Points measured already are
kept, interrupted point runs are completed (as `lakecompat run --resume` does), then compared.

Two run folders are compared only when both runs finished: an interrupted, failed or still
running run is refused, naming the run, its status and the command that completes it.

exit codes:
  0  the candidate breaks no cell that passed on the baseline
  1  the candidate breaks at least one such cell (listed first in the reports)
  2  bad input (versions file, point, a release that does not exist, a run folder without a
     finished run), or the harness failed
  130  interrupted (the message gives the `qualify --resume` command)
"""


def add_parser(commands: Subcommands) -> None:
    """The `qualify` command's options."""
    qualify = commands.add_parser(
        "qualify",
        help="qualify an upgrade: run two or more version points and compare them",
        description="Run the matrix at each version point (from --versions or --point), or "
        "take two finished runs, and compare the baseline with the candidate cell by cell. "
        "Writes qualify.md, qualify.html, qualify.json and qualify-junit.xml: the cells the "
        "candidate breaks first, then those it fixes, then the failures on both.",
        epilog=EPILOG,
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
        "--versions",
        type=Path,
        metavar="FILE",
        help="a versions file (see versions/*.yaml); its `engines:` and `scenarios:`, where it "
        "has them, choose the cells unless --engines and --scenarios are given",
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
    scenario_options(qualify)
    qualify.add_argument(
        "--formats",
        type=csv,
        default=None,
        help=f"comma-separated table formats to qualify ({', '.join(FORMATS)}); default: the "
        "formats the points' fields concern (Iceberg's for iceberg and format_version, "
        "Delta's for delta and column_mapping, Hudi's otherwise), every default format when "
        "two runs are compared",
    )
    qualify.add_argument(
        "--engines",
        type=csv,
        default=None,
        help="comma-separated engines to read with (default: the versions file's `engines:`, "
        f"else {readers_words()})",
    )
    qualify.add_argument(
        "--table-types", type=csv, default=TABLE_TYPES, help="cow and/or mor (default: both)"
    )
    shapes_option(qualify)
    reports_option(
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
        "--out",
        type=Path,
        metavar="DIR",
        help="where to write the qualification files (default: REPORTS/qualify)",
    )
    table_cache_option(qualify)
    qualify.add_argument(
        "--resume",
        type=Path,
        metavar="FOLDER",
        help="complete an interrupted qualification: the folder it writes its reports to "
        "(--out; default REPORTS/qualify), whose qualification.json records its points and "
        "their run folders. Points already measured are kept, interrupted point runs are "
        "completed (as `lakecompat run --resume` does), the others run; then the points are "
        "compared. The options are those the qualification started with",
    )
    qualify.add_argument("--quiet", action="store_true", help="no progress output")


def handle(args: argparse.Namespace) -> int:
    """Compare the baseline with the candidate; 1 when the candidate breaks a cell."""
    # Running points brings Spark and every engine's class along: imported once asked for.
    from lakecompat.harness.qualify.run import compare_runs, selected

    sources = [bool(args.runs), bool(args.versions), bool(args.points), bool(args.resume)]
    if sources.count(True) != 1:
        raise ValueError(
            "qualify needs exactly one of: two run folders, --versions FILE, --point (twice), "
            "or --resume FOLDER"
        )
    names: tuple[str, str] | None = None
    keep = None
    record: Record | None = None
    out = args.out or args.reports / "qualify"
    if args.runs:
        if len(args.runs) != 2:
            raise ValueError(f"qualify compares two runs; {len(args.runs)} given")
        baseline, candidate = args.runs
        args.formats = args.formats or list(DEFAULT_FORMATS)
        chosen = selection(args)
        keep = selected(
            chosen["pattern"], chosen["engines"], chosen["table_types"], chosen["formats"]
        )
    else:
        record = _resumed(args) if args.resume else _started(args, out)
        out = record.folder
        baseline, candidate, names = _measure(record, args.quiet)
    result = compare_runs(baseline, candidate, names, keep)
    paths = write_qualification(result, out)
    if record is not None:
        record.mark("complete")
    print(f"{result.baseline.label()} -> {result.candidate.label()}")
    print(counts_line(result))
    print(f"qualification: {paths[0]} (and {', '.join(p.name for p in paths[1:])})")
    return 1 if result.breaks else 0


def _started(args: argparse.Namespace, out: Path) -> Record:
    """A new qualification of the points of `--versions` or `--point`: every point's releases
    checked, what it will run said, and its record saved in `out`."""
    from lakecompat.harness.qualify.record import new_record
    from lakecompat.harness.qualify.run import check_points, plan_line
    from lakecompat.harness.qualify.versions import load_versions, parse_points

    plan = load_versions(args.versions) if args.versions else parse_points(args.points)
    args.formats = args.formats or list(plan.formats())
    # What the versions file is meant for, unless the command line says otherwise.
    args.engines = args.engines or plan.engines
    args.scenarios = args.scenarios or (",".join(plan.scenarios) if plan.scenarios else None)
    options = RunOptions(**selection(args))
    planned = plan_line(plan, options)  # a --scenarios glob that matches nothing stops here
    check_points(plan, options)
    _note_replaced(out)
    record = new_record(out, plan, options)
    print(planned)
    return record


def _resumed(args: argparse.Namespace) -> Record:
    """The interrupted qualification in `--resume`'s folder, its releases checked again."""
    from lakecompat.harness.qualify.record import load_record
    from lakecompat.harness.qualify.run import check_points, plan_line

    if args.out:
        raise ValueError("--resume writes the qualification back into its folder; leave out --out")
    record = load_record(args.resume)
    planned = plan_line(record.plan, record.options)
    check_points(record.plan, record.options)
    print(planned)
    return record


def _measure(record: Record, quiet: bool) -> tuple[Path, Path, tuple[str, str]]:
    """Run (or complete) the record's points: the baseline's and the candidate's run folders
    and names."""
    from lakecompat.harness.qualify.run import qualify_points

    runs = qualify_points(record, quiet)
    base, cand = record.plan.baseline_point(), record.plan.candidate_point()
    return runs[base.name].run_dir, runs[cand.name].run_dir, (base.name, cand.name)


def _note_replaced(out: Path) -> None:
    """Say so when a new qualification replaces the record of an unfinished one in `out`."""
    from lakecompat.harness.qualify.record import load_record

    try:
        before = load_record(out)
    except ResultsError:
        return
    if before.status != "complete":
        print(
            f"note: {out} held a qualification that did not finish ({before.status}); this one "
            "replaces it (its points' run folders stay in their reports folders)"
        )


QUALIFY = Command("qualify", add_parser, handle)
