"""The plan of a run: which scenarios, which tables (scenario × table type), how many cells,
which known outcomes judge them, and which tables a resumed run has finished already."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from lakecompat.engines import engine_class, known_engines
from lakecompat.engines.base import Engine
from lakecompat.engines.formats import format_named
from lakecompat.harness.results.expectations import (
    Known,
    check_references,
    from_records,
    load_expectations,
)
from lakecompat.harness.results.hints import program
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.reads import table_reads
from lakecompat.harness.run.shards import assign, estimate, load_costs, plan_digest, table_id
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.type_shapes import ALWAYS_BASELINE, scenario_shapes
from lakecompat.harness.writer import format_lacks


def select_scenarios(options: RunOptions) -> list[Scenario]:
    """The chosen scenarios, after the baselines (they tell general failures from evolution
    failures): `baseline/no_change` always, each other baseline where a chosen scenario has a
    column type it carries (`needed_baselines`)."""
    everything = load_scenarios(options.scenarios_dir)
    chosen = load_scenarios(options.scenarios_dir, options.pattern)
    categories = ", ".join(sorted({s.category for s in everything}))
    lists = f"`{program()} scenarios` lists them"
    hint = f"ids are <category>/<name>, categories: {categories}; {lists}"
    if not chosen:
        raise ValueError(f"no scenario matches {options.pattern!r} ({hint})")
    for glob in [g.strip() for g in (options.pattern or "").split(",") if g.strip()]:
        if not any(fnmatch.fnmatch(s.id, glob) for s in everything):
            raise ValueError(f"no scenario matches {glob!r} (one of the --scenarios globs; {hint})")
    _check_formats_have_tables(options, chosen)
    baselines = [s for s in needed_baselines(everything, chosen) if s not in chosen]
    if options.reverse_order:
        chosen = [s for s in chosen if s.spec.baseline] + [
            s for s in reversed(chosen) if not s.spec.baseline
        ]
    return baselines + chosen


def needed_baselines(everything: list[Scenario], chosen: list[Scenario]) -> list[Scenario]:
    """The baselines a run of `chosen` reads: `baseline/no_change` (and any baseline of simple
    columns only), and each one that carries a column type shape (`array<struct<int>>`,
    `decimal(8,2)`) of a chosen scenario beyond those of `baseline/no_change`."""
    baselines = [s for s in everything if s.spec.baseline]
    plain = next((s for s in baselines if s.id == ALWAYS_BASELINE), None)
    common = scenario_shapes(plain.spec) if plain else set()
    used = set().union(*(scenario_shapes(s.spec) for s in chosen if not s.spec.baseline))
    needed = []
    for baseline in baselines:
        carried = scenario_shapes(baseline.spec) - common
        if baseline is plain or not carried or carried & used:
            needed.append(baseline)
    return needed


def _check_formats_have_tables(options: RunOptions, chosen: list[Scenario]) -> None:
    """A `--scenarios` choice whose scenarios have no table in any format the run writes (an
    Iceberg-only step in a Hudi run, say) is refused with the reason, not run as nothing."""
    if options.pattern is None:
        return
    written = [
        s
        for s in chosen
        if s.spec.baseline or any(format_lacks(f, s) is None for f in options.formats)
    ]
    if written:
        return
    first = chosen[0]
    why = "; ".join(f"{f}: {format_lacks(f, first)}" for f in options.formats)
    raise ValueError(
        f"--scenarios {options.pattern!r} chooses no scenario with a table in the formats this "
        f"run writes ({', '.join(options.formats)}): {first.id} has none ({why}); write another "
        "format with --formats (or leave --formats and --engines out)"
    )


def tables(
    scenarios: Iterable[Scenario], table_types: Iterable[str]
) -> Iterator[tuple[Scenario, str]]:
    """Every (scenario, table type) to write, in the run's order."""
    wanted = tuple(table_types)
    for scenario in scenarios:
        for table_type in wanted:
            if table_type in scenario.spec.table_types:
                yield scenario, table_type


def format_tables(
    scenarios: Iterable[Scenario], table_types: Iterable[str], formats: Iterable[str]
) -> Iterator[tuple[Scenario, str, str]]:
    """Every (scenario, table type, format) to write, in the run's order: each format's tables
    in turn, without the scenarios a format has no table of (`format_lacks`)."""
    chosen, wanted = list(scenarios), tuple(table_types)
    for table_format in formats:
        usable = [s for s in chosen if format_lacks(table_format, s) is None]
        for scenario, table_type in tables(usable, wanted):
            yield scenario, table_type, table_format


def planned_cells(
    planned: Iterable[tuple[Scenario, str]],
    engines: Sequence[Engine | type[Engine]],
    shapes: tuple[str, ...],
    table_format: str = "hudi",
) -> int:
    """How many cells the tables (of `table_format`) give with these engines and shapes."""
    return sum(
        len(table_reads(engine, scenario, table_type, shapes, table_format=table_format))
        for scenario, table_type in planned
        for engine in engines
    )


def table_done(
    done: dict[tuple[str, ...], Cell],
    scenario: Scenario,
    table_type: str,
    engines: list[Engine],
    shapes: tuple[str, ...],
    table_format: str = "hudi",
) -> bool:
    """Whether a resumed run already has every cell of this table."""
    if not done:
        return False
    return all(
        read.key(engine.name, table_type, scenario.id, table_format) in done
        for engine in engines
        for read in table_reads(engine, scenario, table_type, shapes, table_format=table_format)
    )


def check_formats(options: RunOptions) -> None:
    """Every engine of the run reads one of its table formats (`--engines`, `--formats`);
    attached engines read Hudi tables only (their catalogs know no other format yet)."""
    for name in options.engines:
        cls = engine_class(name)
        if not any(cls.reads_format(f) for f in options.formats):
            raise ValueError(
                f"--engines names {name}, which reads {' and '.join(cls.formats)} tables; this "
                f"run writes {' and '.join(options.formats)} (--formats)"
            )
    for table_format in options.formats:
        if not any(engine_class(n).reads_format(table_format) for n in options.engines):
            raise ValueError(
                f"--formats names {table_format}, whose tables none of the engines "
                f"({', '.join(options.engines)}) reads: add a reader of it to --engines "
                f"(`{program()} run --help` lists them) or leave it out of --formats"
            )
    unattachable = [f for f in options.formats if not format_named(f).attachable]
    if unattachable and options.attachments.any:
        titles = " and ".join(format_named(f).title for f in unattachable)
        raise ValueError(
            f"{titles} tables are read by the engines lakecompat starts only, for now: leave "
            "out --formats, or the options that attach engines (--spark-master, --trino, ...)"
        )


def load_known(options: RunOptions) -> list[Known]:
    """The known outcomes that judge the run (checked against the scenarios and engines)."""
    if options.known_records is not None:
        return from_records(options.known_records)
    folder = options.expectations_dir
    if folder is None:
        return []
    known = load_expectations(folder)
    scenario_ids = [s.id for s in load_scenarios(options.scenarios_dir)]
    check_references(known, scenario_ids, known_engines())
    return known


def shard_plan(options: RunOptions, scenarios: list[Scenario]) -> dict[str, Any] | None:
    """What `run.json` records of the run's shard (None when the run is not a shard):
    `index`, `count`, its `tables`, the `plan` fingerprint of every shard's share, and the
    cost file. Baseline tables are in every shard and in no share."""
    if options.shard_record is not None:
        return options.shard_record
    if options.shard is None:
        return None
    planned = [
        (s, t, f)
        for s, t, f in format_tables(scenarios, options.table_types, options.formats)
        if not s.spec.baseline
    ]
    measured = load_costs(options.shard_costs) if options.shard_costs else {}
    engines = [engine_class(n) for n in options.engines]
    costs = {
        table_id(s, t, f): measured.get(table_id(s, t, f))
        or estimate(s, t, planned_cells([(s, t)], engines, options.shapes, f))
        for s, t, f in planned
    }
    shares = assign(costs, options.shard.count)
    return {
        "index": options.shard.index,
        "count": options.shard.count,
        "tables": shares[options.shard.index - 1],
        "plan": plan_digest(shares),
        "costs": str(options.shard_costs) if options.shard_costs else None,
    }
