"""`lakecompat repro`: one cell of a run as a standalone reproduction and an issue draft."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lakecompat.harness.options import DEFAULT_SCENARIOS, Command, Subcommands
from lakecompat.harness.run.progress import Progress


def add_parser(commands: Subcommands) -> None:
    """The `repro` command's options."""
    repro = commands.add_parser(
        "repro",
        help="write a reproduction of one cell, for an upstream bug report",
        description="Write a folder that reproduces one cell without lakecompat: writer.py "
        "(the table, as a PySpark script for spark-submit), the engine's "
        "registration, "
        "settings and SQL, expected.csv (the oracle) and actual.csv (the engine's answer), "
        "and ISSUE.md, a draft bug report. The table is written again, writer.py is run and "
        "compared with it, and the cell is measured again; repro.json and ISSUE.md say "
        "whether it reproduced. Exit code 0: reproduced, and writer.py makes the same table "
        "(or stops at the step where lakecompat's writer stops); 1: not; 2: bad input.",
    )
    repro.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a reports/runs/<id> folder")
    repro.add_argument(
        "cell_id",
        metavar="CELL_ID",
        help="the cell's id as in junit.xml and the HTML report, e.g. "
        "trino.cow.snapshot.rename_column/rename[column_names] (a Hudi table's cell) or "
        "spark.iceberg.mor.snapshot.rename_column/rename[default] (an Iceberg table's)",
    )
    repro.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder to write (default: RUN_DIR/repro/<cell id>); relative paths are taken from "
        "the current folder",
    )
    repro.add_argument(
        "--scenario-dir",
        type=Path,
        default=DEFAULT_SCENARIOS,
        metavar="DIR",
        help=f"the folder of scenario files the run used (default: {DEFAULT_SCENARIOS})",
    )
    repro.add_argument("--quiet", action="store_true", help="no progress output")


def handle(args: argparse.Namespace) -> int:
    """Write the reproduction folder; 0 when the cell reproduced and writer.py agrees."""
    # Reproducing writes with Spark: imported once asked for, not for --help.
    from lakecompat.harness.repro.reproduce import default_folder, reproduce, summary

    try:
        made = reproduce(
            args.run_dir, args.cell_id, args.out, args.scenario_dir, Progress(quiet=args.quiet)
        )
    except KeyboardInterrupt:
        folder = args.out or default_folder(args.run_dir, args.cell_id)
        print(
            f"lakecompat: interrupted; the reproduction in {folder} is incomplete: run the "
            "same command again to write it (its engines and Spark are stopped)",
            file=sys.stderr,
        )
        return 130
    print(summary(made))
    return 0 if made.reproduced and made.script.agrees else 1


REPRO = Command("repro", add_parser, handle)
