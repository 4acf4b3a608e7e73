"""Scenario files: the declarative model, loading and validation with file-and-field errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from engines.formats import FORMATS
from harness.scenario.types import ColumnType, parse_type

IDENTIFIER_PATTERN = r"^[a-z_][a-z0-9_]{0,63}$"
Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]
#: A column or a nested field: `point.x`, `items.element.qty`, `attrs.value.note`.
ColumnPath = Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]{0,63}(\.[a-z_][a-z0-9_]{0,63}){0,5}$")]
TableType = Literal["cow", "mor"]
TABLE_TYPES: tuple[str, ...] = ("cow", "mor")
MAX_ROWS = 10_000
#: Folder and file names of scenarios: they become table names, so SQL-safe and short.
SCENARIO_ID = re.compile(r"^[a-z0-9_]{1,60}(/[a-z0-9_]{1,60}){0,3}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ColumnSpec(_Strict):
    """A column declaration: `{name: qty, type: int}`."""

    name: Identifier
    type: ColumnType
    comment: str | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _parse_type(cls, value: Any) -> ColumnType:
        return value if isinstance(value, ColumnType) else parse_type(value)


Rows = Annotated[list[dict[str, Any]], Field(min_length=1, max_length=MAX_ROWS)]


#: The option prefixes of the formats whose writers take them (`TableFormat.writer_option_prefix`).
OPTION_PREFIXES = tuple(f.writer_option_prefix for f in FORMATS.values() if f.writer_option_prefix)
#: Writer options a step may set: a format's own keys (`TableFormat.writer_option_prefix`),
#: nothing else; a format other than the keys' own has no table of the scenario.
WriterSettings = dict[
    Annotated[
        str,
        Field(pattern="^(" + "|".join(map(re.escape, OPTION_PREFIXES)) + r")[a-z0-9_.]{1,200}$"),
    ],
    str,
]


class Insert(_Strict):
    """Write rows whose keys are new (Hudi `insert`)."""

    op: Literal["insert"]
    rows: Rows
    settings: WriterSettings = Field(default_factory=dict)


class Upsert(_Strict):
    """Write rows (Hudi `upsert`); a `schema` of its own makes it a schema-on-write change.

    `settings` are extra Hudi writer options for this write only; changing the table's record
    key, precombine or partition field this way is a change the writer should refuse.
    """

    op: Literal["upsert"]
    rows: Rows
    schema_: list[ColumnSpec] | None = Field(default=None, alias="schema", min_length=1)
    settings: WriterSettings = Field(default_factory=dict)

    @property
    def is_change(self) -> bool:
        """Whether this write changes the schema or the table's configuration."""
        return self.schema_ is not None or bool(self.settings)


class Delete(_Strict):
    """Delete rows by record key."""

    op: Literal["delete"]
    keys: Annotated[list[Any], Field(min_length=1, max_length=MAX_ROWS)]


class NewColumnSpec(ColumnSpec):
    """A column to add; a dotted name (`point.z`) adds a field to a struct."""

    name: ColumnPath  # type: ignore[assignment]


class AddColumn(_Strict):
    """`ALTER TABLE ... ADD COLUMNS`, at the end, `first: true` or `after: <column>`."""

    op: Literal["add_column"]
    column: NewColumnSpec
    after: Identifier | None = None
    first: bool = False


class DropColumn(_Strict):
    """`ALTER TABLE ... DROP COLUMN`; `column` may be a nested field (`point.y`)."""

    op: Literal["drop_column"]
    column: ColumnPath


class DropColumns(_Strict):
    """`ALTER TABLE ... DROP COLUMNS (a, b)`: several columns in one change."""

    op: Literal["drop_columns"]
    columns: Annotated[list[Identifier], Field(min_length=2, max_length=50)]


class MoveColumn(_Strict):
    """`ALTER TABLE ... ALTER COLUMN ... FIRST` or `AFTER <column>`: reorder a column."""

    op: Literal["move_column"]
    column: Identifier
    after: Identifier | None = None
    first: bool = False


class RenameColumn(_Strict):
    """`ALTER TABLE ... RENAME COLUMN`; `column` may be a nested field, `to` is the new name."""

    op: Literal["rename_column"]
    column: ColumnPath
    to: Identifier


class ChangeType(_Strict):
    """`ALTER TABLE ... ALTER COLUMN ... TYPE`."""

    op: Literal["change_type"]
    column: ColumnPath
    to: ColumnType

    @field_validator("to", mode="before")
    @classmethod
    def _parse_type(cls, value: Any) -> ColumnType:
        return value if isinstance(value, ColumnType) else parse_type(value)


class AddPartitionField(_Strict):
    """Iceberg's partition evolution: `ALTER TABLE ... ADD PARTITION FIELD <column>`. Files
    written before keep their partitioning; later writes are partitioned by the column too.
    Hudi has no partition evolution (a table's partition fields are fixed when it is made)."""

    op: Literal["add_partition_field"]
    column: Identifier


class DropPartitionField(_Strict):
    """Iceberg's partition evolution: `ALTER TABLE ... DROP PARTITION FIELD <column>`; later
    writes are no longer partitioned by the column."""

    op: Literal["drop_partition_field"]
    column: Identifier


class Compaction(_Strict):
    """Schedule and run a compaction (merge-on-read only; nothing to do for copy-on-write)."""

    op: Literal["compaction"]


class Clustering(_Strict):
    """Schedule and run a clustering: every file group rewritten into new base files."""

    op: Literal["clustering"]


class UpgradeWriter(_Strict):
    """The writer's Hudi release changes here: the seed rows and the steps before this one are
    written by the older release `from`, the steps after it by the run's release, which
    upgrades the table (its table version) on its first write, as a real upgrade does."""

    op: Literal["upgrade_writer"]
    from_: Annotated[str, Field(alias="from", pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")]


Step = Annotated[
    Insert
    | Upsert
    | Delete
    | AddColumn
    | DropColumn
    | DropColumns
    | MoveColumn
    | RenameColumn
    | ChangeType
    | AddPartitionField
    | DropPartitionField
    | Compaction
    | Clustering
    | UpgradeWriter,
    Field(discriminator="op"),
]
SCHEMA_OPS = (
    "add_column",
    "drop_column",
    "drop_columns",
    "move_column",
    "rename_column",
    "change_type",
    "add_partition_field",
    "drop_partition_field",
)
#: The schema-change steps that change the table's partitioning, not its columns.
PARTITION_OPS = ("add_partition_field", "drop_partition_field")
OPS = ("insert", "upsert", "delete", *SCHEMA_OPS, "compaction", "clustering", "upgrade_writer")


class ScenarioSpec(_Strict):
    """The content of one scenario file."""

    title: str = Field(min_length=1)
    description: str = ""
    baseline: bool = False
    table_types: list[TableType] = Field(default_factory=lambda: list(TABLE_TYPES), min_length=1)
    key: Identifier
    precombine: Identifier
    #: Partition columns (Hive-style folders `col=value`); none means a non-partitioned table.
    partition_by: list[Identifier] = Field(default_factory=list, max_length=3)
    schema_: list[ColumnSpec] = Field(alias="schema", min_length=1, max_length=200)
    rows: Rows
    steps: list[Step] = Field(default_factory=list, max_length=100)
    #: What the table's live files must hold after the steps (see `harness.file_layout`):
    #: `old_files` written before the schema change, `new_files` written after it,
    #: `older_writer_files` written by the older release of an `upgrade_writer` step. None:
    #: the default for the scenario's steps.
    needs: list[Literal["old_files", "new_files", "older_writer_files"]] | None = Field(
        default=None, max_length=3
    )

    @model_validator(mode="after")
    def _one_upgrade(self) -> ScenarioSpec:
        if len([s for s in self.steps if isinstance(s, UpgradeWriter)]) > 1:
            raise ValueError("a scenario changes the writer's release at most once")
        return self

    @property
    def upgrade(self) -> tuple[int, UpgradeWriter] | None:
        """(index in `steps`, step) of the writer's upgrade, if the scenario has one."""
        for index, step in enumerate(self.steps):
            if isinstance(step, UpgradeWriter):
                return index, step
        return None


@dataclass(frozen=True)
class Scenario:
    """A validated scenario and where it came from; `id` is its path below the scenarios folder."""

    id: str
    path: Path
    spec: ScenarioSpec

    @property
    def category(self) -> str:
        return self.id.split("/")[0] if "/" in self.id else "uncategorized"


def table_name(scenario_id: str, table_type: str) -> str:
    """The table's name in every engine: `t_<scenario id, / as _>_<table type>`."""
    return f"t_{scenario_id.replace('/', '_')}_{table_type}"


def changes(spec: ScenarioSpec) -> list[int]:
    """The indices of the steps that change the schema (DDL, or a write with its own schema)."""
    return [
        index
        for index, step in enumerate(spec.steps)
        if step.op in SCHEMA_OPS or (isinstance(step, Upsert) and step.schema_ is not None)
    ]


def needs(spec: ScenarioSpec) -> tuple[str, ...]:
    """What the table must hold after the steps: the scenario's `needs`, or the default.

    The default for a scenario that changes the schema: files written before the first change
    (`old_files`) and, when an insert or upsert comes at or after the last change, files
    written after it (`new_files`); for a scenario that upgrades the writer, files written by
    the older release (`older_writer_files`). Otherwise: nothing.
    """
    if spec.needs is not None:
        return tuple(spec.needs)
    upgraded = ("older_writer_files",) if spec.upgrade is not None else ()
    changed = changes(spec)
    if not changed:
        return upgraded
    writes_after = any(step.op in ("insert", "upsert") for step in spec.steps[changed[-1] :])
    return (*(("old_files", "new_files") if writes_after else ("old_files",)), *upgraded)
