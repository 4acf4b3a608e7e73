"""The `lakecompat` command line: the top-level parser, the loop over commands, and what an
error or Ctrl-C ends with. Each command's options and handler live with its work, in its
folder's `command.py`."""

from __future__ import annotations

import argparse
import signal
import sys

from lakecompat.engines import UnknownEngineError
from lakecompat.engines.infra.artifacts import ProvisioningError
from lakecompat.engines.infra.containers.runtime import ContainerError
from lakecompat.harness.explore.command import EXPLORE
from lakecompat.harness.options import EXIT_CODES, Command, OptionError, Parser
from lakecompat.harness.qualify.command import QUALIFY
from lakecompat.harness.report.command import DIFF, REPORT
from lakecompat.harness.repro.command import REPRO
from lakecompat.harness.results.command import KNOWN
from lakecompat.harness.results.expectations import ExpectationError
from lakecompat.harness.results.store import ResultsError
from lakecompat.harness.run import console
from lakecompat.harness.run.command import MERGE, RUN
from lakecompat.harness.run.interrupt import RunInterrupted, stays_ignored
from lakecompat.harness.scenario.command import SCENARIOS
from lakecompat.harness.scenario.load import ScenarioError

DESCRIPTION = """\
lakecompat writes Apache Hudi and Apache Iceberg tables with Spark, changes their schema the
way data teams do (add, drop, rename, retype columns), reads them back with each query engine
that reads their format, and compares every answer with the expected table. The result is a
compatibility matrix: one cell per scenario, table format, table type, query type and engine,
each with an outcome, a reason and the evidence. `lakecompat <command> --help` says more
about each command.

Outcomes: PASS (answer correct), WRONG (answer incorrect; the reason says how), ERROR (the
engine raised), REJECTED (the writer refused the schema change), UNSUPPORTED (the engine has
no such query type), ENGINE_FAILED (the engine could not read even a plain Parquet table).
"""
#: Every command, in the order `lakecompat --help` lists them.
COMMANDS: tuple[Command, ...] = (
    RUN,
    SCENARIOS,
    REPORT,
    KNOWN,
    MERGE,
    REPRO,
    EXPLORE,
    DIFF,
    QUALIFY,
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command."""
    parser = Parser(
        prog="lakecompat",
        description=DESCRIPTION,
        epilog=EXIT_CODES,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code (2 for bad input, 130 when interrupted)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's parser, which knows its options
        subparser = Parser(prog=f"{parser.prog} {args.command}")
        subparser.error(f"unrecognized arguments: {' '.join(unknown)}")
    # SIGTERM (a CI job cancelled, `kill`) and SIGHUP (the terminal closed) stop a command
    # like Ctrl-C: services are stopped and a run's finished cells kept, so that `--resume`
    # can complete it. A closed pipe or a hung-up terminal no longer breaks off what is
    # printed (`harness.run.console`).
    # SIGHUP stays ignored under `nohup`: the command outlives its terminal.
    previous = {
        number: signal.signal(number, _interrupt)
        for number in LATER_SIGNALS
        if not stays_ignored(number)
    }
    try:
        with console.guarded():
            return _handle(args)
    finally:
        for number, before in previous.items():
            signal.signal(number, before)


def _handle(args: argparse.Namespace) -> int:
    """The command's exit code; an error or an interrupt is said on stderr."""
    handle = next(c.handle for c in COMMANDS if c.name == args.command)
    try:
        return handle(args)
    except OptionError as exc:
        print(f"lakecompat {args.command}: {exc}", file=sys.stderr)
        return 2
    except (
        ScenarioError,
        ExpectationError,
        UnknownEngineError,
        ProvisioningError,
        ContainerError,
        ResultsError,
        ValueError,
    ) as exc:
        print(f"lakecompat: error: {exc}", file=sys.stderr)
        return 2
    except RunInterrupted as stop:
        print(stop.message(), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        # Not in a run's cells (those raise RunInterrupted): before a run had its folder, or
        # a command that keeps nothing half-done worth completing.
        print("lakecompat: interrupted", file=sys.stderr)
        return 130


#: The stop signals besides Ctrl-C (whose KeyboardInterrupt Python raises already).
LATER_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
