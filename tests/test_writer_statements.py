"""The writer's pure parts: DDL per schema change, timeline instants, partition folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.model import table_name
from lakecompat.harness.scenario.types import parse_type
from lakecompat.harness.writer.hudi.statements import ddl
from lakecompat.harness.writer.hudi.timeline import (
    completed_as_now,
    latest_instant,
    partition_folders,
    table_version,
)


@pytest.mark.parametrize(
    ("step", "statement"),
    [
        (
            sc.AddColumn(
                op="add_column", column=sc.NewColumnSpec(name="c", type=parse_type("int"))
            ),
            "ALTER TABLE `t` ADD COLUMNS (`c` INT)",
        ),
        (
            sc.AddColumn(
                op="add_column",
                column=sc.NewColumnSpec(name="c", type=parse_type("string"), comment="it's"),
                after="a",
            ),
            "ALTER TABLE `t` ADD COLUMNS (`c` STRING COMMENT 'it\\'s' AFTER `a`)",
        ),
        (sc.DropColumn(op="drop_column", column="a"), "ALTER TABLE `t` DROP COLUMN `a`"),
        (
            sc.AddColumn(
                op="add_column", column=sc.NewColumnSpec(name="p.z", type=parse_type("int"))
            ),
            "ALTER TABLE `t` ADD COLUMNS (`p`.`z` INT)",
        ),
        (
            sc.RenameColumn(op="rename_column", column="items.element.qty", to="n"),
            "ALTER TABLE `t` RENAME COLUMN `items`.`element`.`qty` TO `n`",
        ),
        (
            sc.ChangeType(op="change_type", column="m.value", to=parse_type("long")),
            "ALTER TABLE `t` ALTER COLUMN `m`.`value` TYPE BIGINT",
        ),
        (
            sc.DropColumns(op="drop_columns", columns=["a", "b"]),
            "ALTER TABLE `t` DROP COLUMNS (`a`, `b`)",
        ),
        (
            sc.MoveColumn(op="move_column", column="a", after="b"),
            "ALTER TABLE `t` ALTER COLUMN `a` AFTER `b`",
        ),
        (
            sc.MoveColumn(op="move_column", column="a", first=True),
            "ALTER TABLE `t` ALTER COLUMN `a` FIRST",
        ),
        (
            sc.RenameColumn(op="rename_column", column="a", to="b"),
            "ALTER TABLE `t` RENAME COLUMN `a` TO `b`",
        ),
        (
            sc.ChangeType(op="change_type", column="a", to=parse_type("decimal(10,2)")),
            "ALTER TABLE `t` ALTER COLUMN `a` TYPE DECIMAL(10,2)",
        ),
    ],
)
def test_schema_changes_become_spark_sql(step: object, statement: str) -> None:
    assert ddl("t", step) == statement


def test_table_names_are_sql_safe_and_unique_per_table_type() -> None:
    assert table_name("type_change/int_to_long", "mor") == "t_type_change_int_to_long_mor"


def test_latest_instant_reads_completed_commits_of_both_timeline_layouts(tmp_path: Path) -> None:
    assert latest_instant(tmp_path) is None
    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    for name in (
        "20260101000000001_20260101000000900.commit",
        "20260101000000002.deltacommit.requested",  # not completed
        "20260101000000003.deltacommit.inflight",
        "20251231000000000.commit",  # 0.x layout
        "20260101000000000_20260101000000100.clean",  # not a data commit
    ):
        (timeline / name).touch()
    assert latest_instant(tmp_path) == ("20260101000000001", "20260101000000900")
    (timeline.parent / "20260102000000000.commit").touch()  # 0.x: one time for both
    assert latest_instant(tmp_path) == ("20260102000000000", "20260102000000000")


def test_an_upgraded_timeline_gives_old_commits_their_new_completion_times(
    tmp_path: Path,
) -> None:
    """Hudi 0.15.0 recorded one time per commit; after Hudi 1.x upgraded the table, its
    timeline holds the same commits with completion times of their own."""
    hoodie = tmp_path / ".hoodie"
    (hoodie / "timeline").mkdir(parents=True)
    recorded = [("20260101000000001", "20260101000000001"), None]
    (hoodie / "timeline" / "20260101000000001_20260101000000777.commit").touch()
    (hoodie / "20260101000000001.commit").touch()  # left behind in the 0.x layout
    assert completed_as_now(tmp_path, recorded) == [
        ("20260101000000001", "20260101000000777"),
        None,
    ]
    assert completed_as_now(tmp_path, [("20270101000000000", "x")]) == [("20270101000000000", "x")]


def test_table_version_comes_from_hoodie_properties(tmp_path: Path) -> None:
    assert table_version(tmp_path) == "?"
    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(
        "#Properties saved\nhoodie.table.name=t\nhoodie.table.version=6\n"
    )
    assert table_version(tmp_path) == "6"


def test_partition_folders_are_the_hive_style_data_folders(tmp_path: Path) -> None:
    for folder in ("region=eu", "region=us"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "f.parquet").touch()
    (tmp_path / ".hoodie" / "x").mkdir(parents=True)
    (tmp_path / ".hoodie" / "x" / "f").touch()
    (tmp_path / "region=empty").mkdir()
    assert partition_folders(tmp_path, 1) == ("region=eu", "region=us")
    assert partition_folders(tmp_path, 0) == ()
