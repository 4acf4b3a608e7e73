"""Shards: a deterministic, balanced share of a run's tables for each of N machines.

A table is a scenario × table type. `--shard K/N` runs the K-th of N shares; every machine
that is given the same scenarios, table types, engines and cost file computes the same
shares. The baseline tables are in every shard (every cell's note about its baseline needs
them); `lakecompat merge` keeps one shard's baseline cells.

Shares are balanced by cost: the seconds each table took in an earlier run (`costs.json` of
its run folder, `--shard-costs`), or, without a cost file, an estimate from the scenario's
number of steps and the table's number of cells. The tables are dealt out most costly first,
each to the shard with the least cost so far (ties: the lower shard number).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from lakecompat.harness.results.outcomes import table_kind
from lakecompat.harness.scenario.model import Scenario

#: The file in every run folder with the seconds each table cost (writing and reading).
COSTS_FILE = "costs.json"
#: Estimated seconds of a writer step and of a query, when there is no cost file.
STEP_SECONDS, QUERY_SECONDS = 1.1, 0.25


class ShardError(ValueError):
    """A bad `--shard` or cost file; the message says which and why."""


@dataclass(frozen=True)
class Shard:
    """The `index`-th (from 1) of `count` shards."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N` with 1 ≤ K ≤ N."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise ShardError(f"--shard {text!r}: expected K/N, for example 1/4")
        index, count = int(match[1]), int(match[2])
        if not 1 <= index <= count:
            raise ShardError(f"--shard {text!r}: K must be from 1 to N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def table_id(scenario: Scenario | str, table_type: str, table_format: str = "hudi") -> str:
    """`scenario/id (cow)`: how shards, cost files and merges name a table; another format
    than Hudi comes before the table type (`scenario/id (iceberg mor)`)."""
    name = scenario if isinstance(scenario, str) else scenario.id
    return f"{name} ({table_kind(table_format, table_type)})"


def estimate(scenario: Scenario, table_type: str, cells: int) -> float:
    """Seconds a table probably costs, when no earlier run measured it."""
    return STEP_SECONDS * (1 + len(scenario.spec.steps)) + QUERY_SECONDS * cells


def load_costs(path: Path) -> dict[str, float]:
    """Seconds per table from a cost file, or from the `costs.json` of a run folder."""
    file = path / COSTS_FILE if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(
            f"{file}: no cost file (every run folder has one once its run has finished)"
        ) from None
    except (OSError, ValueError) as exc:
        raise ShardError(f"{file}: not a readable cost file: {exc}") from None
    tables = data.get("tables") if isinstance(data, dict) else None
    if not isinstance(tables, dict) or not all(
        isinstance(v, int | float) and v >= 0 for v in tables.values()
    ):
        raise ShardError(f"{file}: field 'tables' must map table names to seconds")
    return {str(k): float(v) for k, v in tables.items()}


def write_costs(run_dir: Path, costs: dict[str, float]) -> None:
    """Record the seconds each table cost in the run folder's `costs.json` (a resumed run
    adds the tables it finished to those recorded before)."""
    file = run_dir / COSTS_FILE
    try:
        before = load_costs(file) if file.is_file() else {}
    except ShardError:  # damaged: this run's figures replace it
        before = {}
    tables = {**before, **{name: round(seconds, 3) for name, seconds in costs.items()}}
    file.write_text(json.dumps({"tables": tables}, indent=1) + "\n", encoding="utf-8")


def assign(costs: dict[str, float], count: int) -> list[list[str]]:
    """The tables of each of `count` shards (in the order given), balanced by cost."""
    loads = [0.0] * count
    shares: list[set[str]] = [set() for _ in range(count)]
    order = list(costs)
    position = {name: number for number, name in enumerate(order)}
    for name in sorted(order, key=lambda n: (-costs[n], position[n])):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += costs[name]
        shares[lightest].add(name)
    return [[name for name in order if name in share] for share in shares]


def plan_digest(shares: list[list[str]]) -> str:
    """A short fingerprint of every shard's tables: shards to merge must share it."""
    return hashlib.sha256(json.dumps(shares).encode()).hexdigest()[:16]
