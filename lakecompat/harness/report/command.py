"""`lakecompat report` (render a run's reports again) and `lakecompat diff` (the cells whose
outcome changed between two runs), and the verdict lines and exit code every command that
judges a run prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lakecompat.harness.options import EXIT_CODES, Command, Subcommands, judging_options
from lakecompat.harness.report.diff import diff_cells, render_json, render_markdown
from lakecompat.harness.report.junit import case_id
from lakecompat.harness.report.render import REPORT_FILES, write_reports
from lakecompat.harness.report.summary import verdict_line
from lakecompat.harness.results.expectations import Judged, Verdict, exit_status, load_expectations
from lakecompat.harness.results.store import load_cells, load_run, unfinished


def judgement(judged: list[Judged], strict: bool) -> int:
    """Print the regressions and the cells fixed upstream (a few of each), then the counts of
    the verdicts; return the exit code."""
    for verdict in (Verdict.REGRESSION, Verdict.FIXED_UPSTREAM):
        rows = [j for j in judged if j.verdict is verdict]
        for row in rows[:10]:
            print(
                f"  {verdict.value}: {case_id(row.cell)}: {row.cell.outcome.value}"
                f" (expected {row.expected.value})"
            )
        if len(rows) > 10:
            print(f"  ... and {len(rows) - 10} more {verdict.value} cells (see summary.md)")
    print(f"against the known outcomes: {verdict_line(judged)}")
    return exit_status(judged, strict)


def add_report_parser(commands: Subcommands) -> None:
    """The `report` command's options."""
    report = commands.add_parser(
        "report",
        help="re-render the reports of a run folder from its results file",
        description="Render results.json, matrix.md, matrix.html, junit.xml and summary.md "
        "from a run folder. The exit code judges the run like `lakecompat run` does; a "
        "folder without a finished run (no cells, or a run that failed or was interrupted) "
        "exits 2 and says so.",
        epilog=EXIT_CODES,
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a reports/runs/<id> folder")
    report.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where to write the reports (default: RUN_DIR)",
    )
    judging_options(report, "default: the known outcomes recorded in RUN_DIR")


def report(args: argparse.Namespace) -> int:
    """Render the reports of a run folder, and judge it; a run that did not finish is not
    judged (exit 2), so that a part of a run never reads as a passing one."""
    known = load_expectations(args.expectations) if args.expectations else None
    info, cells = load_run(args.run_dir)
    problem = unfinished(args.run_dir, info, cells)
    if not cells:
        print(f"lakecompat: error: {problem}; nothing was rendered", file=sys.stderr)
        return 2
    out = args.out or args.run_dir
    judged = write_reports(args.run_dir, [out], known)
    print(f"wrote {', '.join(REPORT_FILES)} to {out}")
    if problem:
        print(f"lakecompat: error: {problem}; its reports show only those cells", file=sys.stderr)
        return 2
    return judgement(judged, args.strict)


DIFF_EPILOG = """\
what it prints, in this order:
  a summary: how many cells changed outcome (regressions, PASS before and not now, counted
  apart), how many kept their outcome with another reason, how many only one run has, how
  many are unchanged; then the cells whose outcome changed, regressions first. Cells only
  one run has (two runs of different --scenarios or --engines differ in thousands) and
  reason-only changes are counted, and listed with --absent and --reasons.

examples:
  lakecompat diff reports/runs/<old> reports/runs/<new>
  lakecompat diff reports/runs/<old> reports/latest --reasons   # and reason-only changes
  lakecompat diff reports/runs/<old> reports/runs/<new> --json --absent

--json prints {"summary": {...counts...}, "changes": [...]} (with --absent: "only_in_new"
and "only_in_old"; with --reasons: "reason_changes"); each cell has its key, "change"
(regression, now passing, outcome changed, reason changed, only in new, only in old) and
both sides' outcome, reason and engine version.
"""


def add_diff_parser(commands: Subcommands) -> None:
    """The `diff` command's options."""
    diff = commands.add_parser(
        "diff",
        help="list the cells whose outcome changed between two runs",
        description="Compare two runs cell by cell (matched by table format, engine, table "
        "type, query type, query shape, scenario and variant; versions are ignored, so runs "
        "before and after an upgrade line up): a summary, then the cells whose outcome "
        "changed, regressions first.",
        epilog=DIFF_EPILOG,
    )
    diff.add_argument(
        "old", type=Path, metavar="OLD", help="run folder, reports folder or results.json"
    )
    diff.add_argument(
        "new", type=Path, metavar="NEW", help="run folder, reports folder or results.json"
    )
    diff.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    diff.add_argument(
        "--absent",
        action="store_true",
        help="also list the cells only one of the runs has (by default they are counted)",
    )
    diff.add_argument(
        "--reasons",
        action="store_true",
        help="also list the cells whose outcome stayed and whose reason changed (by default "
        "they are counted)",
    )


def diff(args: argparse.Namespace) -> int:
    """Print the summary and the cells whose outcome changed (Markdown, or JSON)."""
    old_info, old = load_cells(args.old)
    new_info, new = load_cells(args.new)
    for path, info, cells in ((args.old, old_info, old), (args.new, new_info, new)):
        # A part of a run lacks cells that are then counted as only in the other run.
        if problem := unfinished(path, info, cells):
            print(f"lakecompat: note: {problem}", file=sys.stderr)
    render = render_json if args.json else render_markdown
    found = diff_cells(old, new)
    print(render(found, str(args.old), str(args.new), args.absent, args.reasons), end="")
    return 0


REPORT = Command("report", add_report_parser, report)
DIFF = Command("diff", add_diff_parser, diff)
