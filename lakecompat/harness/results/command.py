"""`lakecompat known`: draft known outcomes from one run or from runs at several version
points."""

from __future__ import annotations

import argparse
from pathlib import Path

from lakecompat.engines.formats import format_words
from lakecompat.harness.options import Command, Subcommands
from lakecompat.harness.results.expectations import load_expectations
from lakecompat.harness.results.known_draft import draft_known_across, draft_on_top, to_yaml
from lakecompat.harness.results.known_review import render, review
from lakecompat.harness.results.store import load_cells


def add_parser(commands: Subcommands) -> None:
    """The `known` command's options."""
    known = commands.add_parser(
        "known",
        help="draft known outcomes from a run (accept its results as the baseline)",
        description="Print an expectations file under which every cell of the run is as "
        f"expected: the fewest entries, each naming table format ({format_words()}), engine, "
        "scenario, table type, query type and variant only as far as needed. Review the "
        "reasons, add upstream links, and save it under expectations/. Given runs at several "
        "version points (e.g. the points of `lakecompat qualify`), entries that hold at one "
        "point only are scoped to its releases (the writer's format release and version, the "
        "releases readers carry, the reader's own: versions) and listed first. With "
        "--against, only what the reviewed known outcomes misjudge is drafted: the entries a "
        "version point needs on top of them. "
        "With --check, nothing is drafted: the reviewed known outcomes are checked against the "
        "runs instead (exit code 1 when an entry is stale or too wide).",
    )
    known.add_argument(
        "run_dirs",
        type=Path,
        nargs="+",
        metavar="RUN",
        help="run folder or results.json; several: one per version point",
    )
    known.add_argument(
        "--out", type=Path, metavar="FILE", help="write the file here instead of printing it"
    )
    reviewed = known.add_mutually_exclusive_group()
    reviewed.add_argument(
        "--against",
        type=Path,
        metavar="DIR",
        help="folder of reviewed known-outcome files (e.g. expectations/): draft only the "
        "entries each run needs on top of them, scoped to the run's releases (the writer's "
        "format release and its table version, the reader's)",
    )
    reviewed.add_argument(
        "--check",
        type=Path,
        metavar="DIR",
        help="folder of reviewed known-outcome files (e.g. expectations/) to check against the "
        "runs (one per version point): entries whose versions are a run's and that judge no "
        "cell (stale), and entries whose WRONG or ERROR cells fail in different ways (too "
        "wide); entries for versions none of the runs has are counted as not checked",
    )


def handle(args: argparse.Namespace) -> int:
    """Print (or write) the drafted expectations file, or the check of reviewed ones."""
    runs = [load_cells(path)[1] for path in args.run_dirs]
    status = 0
    if args.check:
        found = review(load_expectations(args.check), runs)
        text, status = render(found, args.check), 0 if found.clean else 1
    elif args.against:
        reviewed = load_expectations(args.against)
        text = to_yaml([e for cells in runs for e in draft_on_top(cells, reviewed)])
    else:
        text = to_yaml(draft_known_across(runs))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return status


KNOWN = Command("known", add_parser, handle)
