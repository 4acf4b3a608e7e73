"""`lakecompat scenarios`: validate and list the scenario files."""

from __future__ import annotations

import argparse

from lakecompat.harness.options import Command, Subcommands, scenario_options
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import needs


def add_parser(commands: Subcommands) -> None:
    """The `scenarios` command's options."""
    listing = commands.add_parser(
        "scenarios",
        help="validate and list the scenario files",
        description="Validate every scenario file (its fields, and its steps in a dry run of "
        "the oracle) and list them: id, table types, what the table must hold after the steps "
        "(old_files, new_files, older_writer_files) and title. A scenario is written as a Hudi "
        "table and as an Iceberg table, unless it is about one format's feature (Iceberg's "
        "partition evolution; Hudi's table services, writer options and writer upgrades). What "
        "a scenario gives one format only is under `formats:` (Hudi's ordering field: "
        "`formats: {hudi: {ordering: ts}}`; the old `precombine: ts` still means it) and is "
        "checked against what that format has. A bad file stops the listing with its path, the "
        "field and what was expected (exit 2).",
    )
    scenario_options(listing)


def handle(args: argparse.Namespace) -> int:
    """Print one line per scenario (id, table types, what its table must hold, title)."""
    scenarios = load_scenarios(args.scenario_dir, args.scenarios)
    for scenario in scenarios:
        types = ",".join(scenario.spec.table_types)
        required = ",".join(needs(scenario.spec)) or "-"
        print(f"{scenario.id:<40} {types:<8} {required:<19} {scenario.spec.title}")
    print(f"{len(scenarios)} scenario(s), all valid")
    return 0


SCENARIOS = Command("scenarios", add_parser, handle)
