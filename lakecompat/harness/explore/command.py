"""`lakecompat explore`: generated evolution sequences, each failure shrunk to the smallest."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from lakecompat.engines import engine_class
from lakecompat.harness.explore.catalog import catalog_run, described
from lakecompat.harness.options import (
    Command,
    Subcommands,
    csv,
    duration,
    reports_option,
    seconds,
    table_cache_option,
)
from lakecompat.harness.results.store import load_cells
from lakecompat.harness.run import folder as run_folder
from lakecompat.harness.run.fleet import REGISTER_LIMIT
from lakecompat.harness.run.options import DEFAULT_ENGINES
from lakecompat.harness.run.progress import Progress
from lakecompat.harness.writer.cache import default_location


def add_parser(commands: Subcommands) -> None:
    """The `explore` command's options."""
    explore = commands.add_parser(
        "explore",
        help="generate evolution sequences as Hudi tables, and shrink each failure to the "
        "smallest sequence",
        description="Generate random but valid evolution sequences (column changes, writes, "
        "deletes, compaction and clustering; both table types) with Hypothesis, write each as "
        "a Hudi table (explore writes no Iceberg tables yet), read it like a scenario, and "
        "shrink every failure to the smallest sequence that still fails the "
        "same way (engine, outcome and reason class). Writes one scenario file per failure "
        "signature (OUT/scenarios/explored/*.yaml, ready for the catalog) and explore.md, "
        "which says which signatures a catalog run already has. The same seed and options "
        "generate the same sequences.",
    )
    explore.add_argument(
        "--budget",
        type=duration,
        default=600,
        metavar="TIME",
        help="how long to explore, e.g. 20m, 90s, 1h (default: 10m)",
    )
    explore.add_argument(
        "--engines",
        type=csv,
        default=DEFAULT_ENGINES,
        help="comma-separated engines that read Hudi tables to read with (default: "
        f"{','.join(DEFAULT_ENGINES)})",
    )
    explore.add_argument(
        "--seed", type=int, default=0, metavar="N", help="random seed (default: 0)"
    )
    explore.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="folder to write (default: REPORTS/explore/<UTC time>)",
    )
    explore.add_argument(
        "--catalog-run",
        type=Path,
        metavar="RUN",
        help="a run of the catalog (run folder, or reports/latest) whose failures count as "
        "covered; a finding it lacks is new (default: the newest complete run under "
        "REPORTS/runs/ of every scenario, both table types and every default engine)",
    )
    explore.add_argument(
        "--max-examples",
        type=int,
        default=200,
        metavar="N",
        help="sequences a round may generate before it gives up finding a new failure "
        "(default: 200)",
    )
    explore.add_argument(
        "--query-timeout",
        type=seconds,
        default=120,
        metavar="SECONDS",
        help="kill and restart an engine whose query (one cell's read) runs longer (default: "
        f"120; 0: no limit). Registering a table may take the longer of this and "
        f"{REGISTER_LIMIT:g} s",
    )
    reports_option(explore, "folder of reports (default: ./reports)")
    table_cache_option(explore)
    explore.add_argument("--quiet", action="store_true", help="no progress output")


def handle(args: argparse.Namespace) -> int:
    """Explore for the budget, write what was found; 130 when interrupted."""
    # Exploring writes with Spark and generates with Hypothesis: imported once asked for.
    from lakecompat.harness.explore.lab import Lab, explore, mark_covered, write_findings

    for name in args.engines:
        engine_class(name)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = (args.out or args.reports / "explore" / stamp).resolve()
    catalog = catalog_run(args.reports, args.catalog_run)
    progress = Progress(quiet=args.quiet)
    cache = None if args.no_table_cache else default_location()
    lab = Lab(out / "work", tuple(args.engines), progress, args.query_timeout, cache)
    try:
        with lab.running():
            result = explore(lab, args.budget, args.seed, args.max_examples)
    finally:
        run_folder.clean(out / "work", keep_tables=False)
    if catalog is not None:
        mark_covered(result, load_cells(catalog)[1])
    result.compared = described(catalog, args.catalog_run, args.reports)
    paths = write_findings(result, out)
    new = sum(1 for f in result.findings.values() if f.covered is False)
    print(
        f"explored {result.examples} sequences in {result.seconds:.0f} s: "
        f"{len(paths)} failure signature(s)"
        + (f", {new} not in the catalog run {catalog}" if catalog is not None else "")
    )
    print(result.compared)
    print(f"report: {out / 'explore.md'}  scenarios: {out / 'scenarios' / 'explored'}")
    if result.interrupted:
        print("lakecompat: explore was interrupted; what it had found is written", file=sys.stderr)
        return 130
    return 0


EXPLORE = Command("explore", add_parser, handle)
