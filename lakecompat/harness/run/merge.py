"""`lakecompat merge`: one run folder from the run folders of a sharded run (`--shard K/N`).

The merged folder is an ordinary run folder: its cells are those an unsharded run records,
in the same order (table by table, in the run's order; within a table, as the shard that ran
it recorded them), and its reports are rendered from them. Every shard runs the baseline
tables; the merged run keeps shard 1's baseline cells. Merging refuses shards of different
runs (other scenarios, engines, versions, settings, known outcomes or shard plan), a shard
given twice, a missing shard, and a shard whose run did not finish.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakecompat.engines import carried_field, carriers, engine_class
from lakecompat.engines.formats import ORIGINAL
from lakecompat.harness.report.render import write_reports
from lakecompat.harness.results.hints import invocation, resume_command
from lakecompat.harness.results.outcomes import Cell
from lakecompat.harness.results.store import (
    EVENTS_FILE,
    ResultsError,
    ResultsWriter,
    load_run,
    write_run_info,
)
from lakecompat.harness.run import folder as run_folder
from lakecompat.harness.run import latest
from lakecompat.harness.run.options import RunResult
from lakecompat.harness.run.plan import format_tables
from lakecompat.harness.run.reads import table_reads
from lakecompat.harness.run.shards import COSTS_FILE, load_costs, table_id, write_costs
from lakecompat.harness.scenario.load import load_scenarios
from lakecompat.harness.scenario.model import Scenario

#: What every shard of one run records alike in `run.json`.
SAME_INPUTS = (
    "writer",
    "engines",
    "engine_order",
    "scenarios",
    "formats",
    "table_types",
    "pattern",
    "engine_settings",
    *(carried_field(name, table_format) for name, table_format in carriers()),
    "known",
)


class MergeError(ValueError):
    """The folders given cannot be merged; the message names the folder and why."""


@dataclass
class ShardRun:
    """One shard's run folder, as read back."""

    folder: Path
    info: dict[str, Any]
    cells: list[Cell]

    @property
    def index(self) -> int:
        return int(self.info["shard"]["index"])

    @property
    def name(self) -> str:
        shard = self.info["shard"]
        return f"{shard['index']}/{shard['count']}"


def load_shards(folders: list[Path]) -> list[ShardRun]:
    """Read every shard's folder; refuse anything that is not one shard each of one run."""
    if len(folders) < 2:
        raise MergeError("merge needs the run folders of at least two shards")
    shards = []
    for folder in folders:
        try:
            info, cells = load_run(folder)
        except ResultsError as exc:
            raise MergeError(str(exc)) from None
        if not isinstance(info.get("shard"), dict):
            raise MergeError(
                f"{folder}: not a shard (its run.json has no 'shard'; shards are runs "
                "started with --shard K/N)"
            )
        shards.append(ShardRun(folder, info, cells))
    first = shards[0]
    for shard in shards[1:]:
        for field in SAME_INPUTS:
            if shard.info.get(field) != first.info.get(field):
                raise MergeError(
                    f"{shard.folder}: its {field!r} differs from that of {first.folder}: "
                    "these are shards of different runs"
                )
        ours, theirs = shard.info["shard"], first.info["shard"]
        if (ours["count"], ours["plan"]) != (theirs["count"], theirs["plan"]):
            raise MergeError(
                f"{shard.folder}: shard {shard.name} was planned differently from "
                f"{first.folder} (shard {first.name}): another shard count or cost file"
            )
    seen: dict[int, ShardRun] = {}
    for shard in shards:
        if shard.index in seen:
            raise MergeError(
                f"shard {shard.name} given twice: {seen[shard.index].folder} and {shard.folder}"
            )
        seen[shard.index] = shard
    count = int(first.info["shard"]["count"])
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if missing:
        raise MergeError(f"shard {', '.join(missing)} missing: merge needs all {count} shards")
    return sorted(shards, key=lambda s: s.index)


def _tables(info: dict[str, Any], scenarios_dir: Path) -> list[tuple[Scenario, str, str]]:
    """The run's tables in its order, from the scenarios it recorded: (scenario, table type,
    format); a run from before formats wrote Hudi tables only."""
    known = {s.id: s for s in load_scenarios(scenarios_dir)}
    missing = [name for name in info["scenarios"] if name not in known]
    if missing:
        raise MergeError(f"{scenarios_dir}: the shards ran scenario {missing[0]!r}, not found here")
    chosen = [known[name] for name in info["scenarios"]]
    return list(format_tables(chosen, info["table_types"], info.get("formats") or [ORIGINAL]))


def _expected_keys(
    info: dict[str, Any], scenario: Scenario, table_type: str, table_format: str
) -> list[tuple[str, ...]]:
    shapes = tuple(info.get("shapes") or ("all",))  # a run before shapes read `SELECT *` only
    variants = info.get("variants") or "all"
    return [
        read.key(engine, table_type, scenario.id, table_format)
        for engine in info["engine_order"]
        for read in table_reads(
            engine_class(engine), scenario, table_type, shapes, variants, table_format
        )
    ]


def merged_cells(shards: list[ShardRun], scenarios_dir: Path) -> list[Cell]:
    """The cells of the whole run, in an unsharded run's order; refuses unfinished shards."""
    info = shards[0].info
    by_table: dict[str, dict[int, list[Cell]]] = {}
    for shard in shards:
        for cell in shard.cells:
            tables = by_table.setdefault(table_id(cell.scenario, cell.table_type, cell.format), {})
            tables.setdefault(shard.index, []).append(cell)
    owner = {name: shard.index for shard in shards for name in shard.info["shard"]["tables"]}
    cells: list[Cell] = []
    for scenario, table_type, table_format in _tables(info, scenarios_dir):
        name = table_id(scenario, table_type, table_format)
        expected = set(_expected_keys(info, scenario, table_type, table_format))
        runs_it = [s for s in shards if scenario.spec.baseline or owner.get(name) == s.index]
        for shard in runs_it:
            have = {c.key for c in by_table.get(name, {}).get(shard.index, [])}
            if not expected <= have:
                raise MergeError(
                    f"{shard.folder}: shard {shard.name} is incomplete: {name} has "
                    f"{len(have & expected)} of its {len(expected)} cells; complete it with "
                    f"`{resume_command(shard.folder)}`"
                )
        cells += by_table[name][runs_it[0].index]
    return cells


def merge(folders: list[Path], reports_dir: Path, scenarios_dir: Path) -> RunResult:
    """Merge the shards' folders into a new run folder under `reports_dir`, which becomes
    `latest/` when the shards ran the default matrix (`harness.run.latest`)."""
    shards = load_shards(folders)
    cells = merged_cells(shards, scenarios_dir)
    run_dir = run_folder.new_run_dir(reports_dir)
    dropped = ("shard", "resumed", "stopped", "error")
    info = {k: v for k, v in shards[0].info.items() if k not in dropped}
    info["run_id"] = run_dir.name
    info["status"] = "complete"  # every shard's cells are there (`merged_cells` checked)
    info["started"] = min(str(s.info.get("started", "")) for s in shards)
    info["merged_from"] = [{"shard": s.name, "run": str(s.folder.resolve())} for s in shards]
    info["invocation"] = invocation(run_dir, reports_dir)
    write_run_info(run_dir, info)
    results = ResultsWriter(run_dir)
    try:
        for cell in cells:
            results.append(cell)
    finally:
        results.close()
    _merge_side_files(shards, run_dir)
    judged = write_reports(run_dir, [run_dir])
    published = latest.publish(run_dir, reports_dir, info, scenarios_dir)
    return RunResult(run_dir, cells, judged, latest=published)


def _merge_side_files(shards: list[ShardRun], run_dir: Path) -> None:
    """Engine restarts of every shard (marked with the shard), and every table's cost."""
    lines = []
    costs: dict[str, float] = {}
    for shard in reversed(shards):  # shard 1's baseline costs win
        events = shard.folder / EVENTS_FILE
        if events.is_file():
            for line in events.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    lines.append((shard.index, {**json.loads(line), "shard": shard.name}))
        if (shard.folder / COSTS_FILE).is_file():
            costs.update(load_costs(shard.folder))
    if lines:
        ordered = [event for _, event in sorted(lines, key=lambda pair: pair[0])]
        text = "".join(json.dumps(event, sort_keys=True) + "\n" for event in ordered)
        (run_dir / EVENTS_FILE).write_text(text, encoding="utf-8")
    write_costs(run_dir, costs)
