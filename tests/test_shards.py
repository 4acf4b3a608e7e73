"""Shards and merging (no engine runs here): the share of each shard, cost files, and every
way `lakecompat merge` must refuse folders that are not the shards of one run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_results_report import cell, write_run

from lakecompat.engines import engine_class
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.harness.cli import main
from lakecompat.harness.run.merge import MergeError, merge
from lakecompat.harness.run.options import RunOptions
from lakecompat.harness.run.plan import format_tables, select_scenarios, shard_plan, tables
from lakecompat.harness.run.shards import Shard, ShardError, assign, estimate, load_costs, table_id

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
CHOSEN = "rename_column/rename,add_column/at_end,drop_column/drop_one"


def test_shard_is_k_of_n() -> None:
    assert Shard.parse("2/4") == Shard(2, 4)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0"):
        with pytest.raises(ShardError, match="--shard"):
            Shard.parse(bad)


def test_tables_are_dealt_most_costly_first_to_the_lightest_shard() -> None:
    costs = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 1.0}
    shares = assign(costs, 2)
    assert shares == [["a", "d"], ["b", "c", "e"]]
    assert sorted(n for share in shares for n in share) == sorted(costs)
    assert assign(costs, 2) == shares  # the same inputs give the same shares
    assert assign(costs, 1) == [list(costs)]


def test_the_catalog_is_dealt_once_and_evenly_over_four_shards() -> None:
    options = RunOptions(scenarios_dir=SCENARIOS, shard=Shard(1, 4), formats=("hudi",))
    scenarios = select_scenarios(options)
    plans = [shard_plan(replace(options, shard=Shard(k, 4)), scenarios) for k in range(1, 5)]
    assert len({plan["plan"] for plan in plans if plan}) == 1
    shares = [set(plan["tables"]) for plan in plans if plan]
    hudi = [(s, t) for s, t, _ in format_tables(scenarios, ("cow", "mor"), ("hudi",))]
    every = {table_id(s, t) for s, t in hudi if not s.spec.baseline}
    assert set().union(*shares) == every and sum(map(len, shares)) == len(every)
    # Iceberg's partition evolution has no Hudi table: not dealt in a Hudi run.
    assert "keys_partitions/partition_evolution_add_field (cow)" not in every
    readers = [engine_class(e) for e in options.engines if engine_class(e).reads_format("hudi")]
    cells = sum(len(reader.reading("hudi").variants) for reader in readers)
    cost = {table_id(s, t): estimate(s, t, cells * len(HUDI.query_types[t])) for s, t in hudi}
    loads = [sum(cost[name] for name in share) for share in shares]
    assert max(loads) <= 1.15 * min(loads), loads


def test_cost_files_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ShardError, match="no cost file"):
        load_costs(tmp_path)
    (tmp_path / "costs.json").write_text('{"tables": {"x (cow)": "slow"}}')
    with pytest.raises(ShardError, match="'tables' must map table names to seconds"):
        load_costs(tmp_path)
    (tmp_path / "costs.json").write_text('{"tables": {"x (cow)": 2.5}}')
    assert load_costs(tmp_path) == {"x (cow)": 2.5}


def test_a_cost_file_moves_tables_between_shards(tmp_path: Path) -> None:
    options = RunOptions(scenarios_dir=SCENARIOS, pattern=CHOSEN, shard=Shard(1, 2))
    scenarios = select_scenarios(options)
    estimated = shard_plan(options, scenarios)
    second = shard_plan(replace(options, shard=Shard(2, 2)), scenarios)
    assert estimated is not None and second is not None
    costly = second["tables"][-1]  # dealt to shard 2 by the estimate; measured, the costliest
    (tmp_path / "costs.json").write_text(json.dumps({"tables": {costly: 1000.0}}))
    options.shard_costs = tmp_path / "costs.json"
    measured = shard_plan(options, scenarios)
    assert measured is not None and measured["tables"] == [costly]
    assert measured["plan"] != estimated["plan"]


# Merging: shard folders written by hand, with every cell their tables need.


def _cells(scenario: str, table_type: str, category: str, reason: str = "") -> list[Any]:
    engine = engine_class("trino")
    return [
        cell(
            scenario=scenario,
            category=category,
            table_type=table_type,
            query_type=query_type,
            engine="trino",
            variant=variant.name,
            reason=reason,
        )
        for query_type in HUDI.query_types[table_type]
        for variant in engine.reading("hudi").variants
    ]


def _shards(tmp_path: Path, count: int = 2) -> list[Path]:
    """The run folders of a run of two scenarios on Trino, cow only, in `count` shards."""
    options = RunOptions(
        scenarios_dir=SCENARIOS, pattern=CHOSEN, engines=("trino",), table_types=("cow",)
    )
    scenarios = select_scenarios(options)
    folders = []
    for k in range(1, count + 1):
        options.shard = Shard(k, count)
        plan = shard_plan(options, scenarios)
        assert plan is not None
        info = {
            "run_id": f"shard{k}",
            "started": f"2026-11-24T0{k}:00:00+00:00",
            "writer": {"spark": "3.5.9", "hudi": "1.2.0"},
            "engines": {"trino": "483"},
            "engine_order": ["trino"],
            "scenarios": [s.id for s in scenarios],
            "table_types": ["cow"],
            "known": [],
            "shard": plan,
        }
        cells = []
        for scenario, table_type in tables(scenarios, ("cow",)):
            if scenario.spec.baseline or table_id(scenario, table_type) in plan["tables"]:
                cells += _cells(scenario.id, table_type, scenario.category, f"by shard {k}")
        folders.append(write_run(tmp_path / f"shard{k}", cells, info))
    return folders


def test_merge_puts_every_table_in_the_run_order(tmp_path: Path) -> None:
    folders = _shards(tmp_path, 3)
    result = merge(list(reversed(folders)), tmp_path / "reports", SCENARIOS)
    run_dir, cells = result.run_dir, [j.cell for j in result.judged]
    scenarios = [c.scenario for c in cells]
    order = json.loads((run_dir / "run.json").read_text())["scenarios"]
    assert sorted(set(scenarios), key=order.index) == list(dict.fromkeys(scenarios))
    assert set(scenarios) == set(order)
    baseline = [c for c in cells if c.category == "baseline"]
    assert baseline and {c.reason for c in baseline} == {"by shard 1"}
    info = json.loads((run_dir / "run.json").read_text())
    assert "shard" not in info and len(info["merged_from"]) == 3
    # The merged run has its reports; it is a narrowed run (Trino, cow), not latest/.
    assert (run_dir / "matrix.html").is_file()
    assert result.latest is not None and not result.latest.updated
    assert "a narrowed run (--formats, --engines, --table-types, --shapes)" in result.latest.why
    assert not (tmp_path / "reports" / "latest").exists()
    assert "Merged from 3 shards" in (run_dir / "summary.md").read_text()


def test_merge_refuses_what_is_not_one_whole_run(tmp_path: Path) -> None:
    one, two = _shards(tmp_path)
    reports = tmp_path / "reports"
    with pytest.raises(MergeError, match="shard 1/2 given twice"):
        merge([one, one], reports, SCENARIOS)
    with pytest.raises(MergeError, match="at least two shards"):
        merge([one], reports, SCENARIOS)
    three = _shards(tmp_path / "three", 3)
    with pytest.raises(MergeError, match="planned differently"):
        merge([one, three[1]], reports, SCENARIOS)
    with pytest.raises(MergeError, match="shard 3/3 missing"):
        merge(three[:2], reports, SCENARIOS)
    plain = write_run(tmp_path / "plain", [cell()], {"run_id": "plain"})
    with pytest.raises(MergeError, match="not a shard"):
        merge([one, plain], reports, SCENARIOS)
    info = json.loads((two / "run.json").read_text())
    (two / "run.json").write_text(json.dumps({**info, "engines": {"trino": "482"}}))
    with pytest.raises(MergeError, match="'engines' differs"):
        merge([one, two], reports, SCENARIOS)
    (two / "run.json").write_text(json.dumps(info))
    lines = (two / "results.jsonl").read_text().splitlines()
    (two / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(MergeError, match=r"shard 2/2 is incomplete.*--resume"):
        merge([one, two], reports, SCENARIOS)


def test_merge_command_reports_bad_shards_as_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, _ = _shards(tmp_path)
    assert main(["merge", str(one), str(one), "--reports", str(tmp_path / "r")]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["run", "--shard", "3/2", "--reports", str(tmp_path / "r")]) == 2
    assert "K must be from 1 to N" in capsys.readouterr().err


def test_the_tables_of_every_format_are_dealt_once_over_the_shards() -> None:
    both = ("hudi", "iceberg")
    plans = [
        shard_plan(
            RunOptions(
                scenarios_dir=SCENARIOS,
                formats=both,
                engines=("spark", "trino"),
                shard=Shard(k, 3),
            ),
            select_scenarios(RunOptions(scenarios_dir=SCENARIOS)),
        )
        for k in range(1, 4)
    ]
    shares = [set(plan["tables"]) for plan in plans if plan]
    scenarios = select_scenarios(RunOptions(scenarios_dir=SCENARIOS))
    every = {
        table_id(s, t, f)
        for s, t, f in format_tables(scenarios, ("cow", "mor"), both)
        if not s.spec.baseline
    }
    assert set().union(*shares) == every and sum(map(len, shares)) == len(every)
    assert "rename_column/rename (iceberg mor)" in every
    assert "rename_column/rename (mor)" in every
    # A scenario with a step only Hudi has is not dealt as an Iceberg table.
    assert "merge_on_read/add_then_compaction (iceberg mor)" not in every
    assert "merge_on_read/add_then_compaction (mor)" in every
