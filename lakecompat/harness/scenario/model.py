"""Scenario files: the declarative model, loading and validation with file-and-field errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from lakecompat.engines.formats import FORMATS, ORIGINAL, TableFormat
from lakecompat.harness.scenario.types import ColumnType, parse_type

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


#: What may follow a format's `writer_option_prefix` in a step setting's key.
_OPTION_NAME = re.compile(r"[a-z0-9_.]{1,200}")


def settings_format(key: str) -> TableFormat | None:
    """The format whose writer takes the step setting `key` (by its `writer_option_prefix`)."""
    return next(
        (
            f
            for f in FORMATS.values()
            if f.writer_option_prefix and key.startswith(f.writer_option_prefix)
        ),
        None,
    )


def _refused(kind: str, message: str) -> PydanticCustomError:
    """A validation error whose message is `message` as it stands (no `Value error, ...`)."""
    return PydanticCustomError(kind, "{message}", {"message": message})


def _writer_setting(key: str) -> str:
    """A step setting's key: a writer option of one format, by its prefix
    (`TableFormat.writer_option_prefix`)."""
    table_format = settings_format(key)
    if table_format is None:
        takes = "; ".join(
            f"{f.title}'s start with {f.writer_option_prefix!r}"
            if f.writer_option_prefix
            else f"{f.title}'s writer takes none"
            for f in FORMATS.values()
        )
        raise _refused(
            "writer_setting",
            f"no table format's writer takes {key!r}: a step's settings are writer options of "
            f"one format ({takes})",
        )
    if not _OPTION_NAME.fullmatch(key[len(table_format.writer_option_prefix) :]):
        raise _refused(
            "writer_setting",
            f"{key!r} is not a {table_format.title} writer option: after "
            f"{table_format.writer_option_prefix!r} come lower-case letters, digits, '_' and '.'",
        )
    return key


#: Writer options a step may set: a format's own keys (`TableFormat.writer_option_prefix`),
#: nothing else; a format other than the keys' own has no table of the scenario.
WriterSettings = dict[Annotated[str, AfterValidator(_writer_setting)], str]


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


class FormatSection(_Strict):
    """What a scenario gives one table format (`formats: {hudi: {ordering: ts}}`): what the
    format's module says a scenario may give it (`TableFormat.ordering_field`)."""

    #: The format's ordering field (Hudi's precombine field): of two writes of one key, the
    #: one with the larger value in this column wins; a later write wins a tie.
    ordering: Identifier | None = None


def _section(table_format: TableFormat) -> type[FormatSection]:
    """The section a scenario may give `table_format`: an `ordering` only where the format has
    an ordering field."""
    if table_format.ordering_field:
        return FormatSection
    having = " or ".join(
        f"the one given to {f.name} ({f.title}'s {f.ordering_field})"
        for f in FORMATS.values()
        if f.ordering_field
    )

    def _lacks(value: str | None) -> str | None:
        if value is not None:
            raise _refused(
                "no_ordering_field",
                f"{table_format.title} has no ordering field, so a scenario cannot give it one"
                + (f"; its upserts follow {having}" if having else ""),
            )
        return value

    return create_model(
        f"{table_format.title}Section",
        __base__=FormatSection,
        __doc__=f"What a scenario gives {table_format.title}: nothing of its own yet.",
        ordering=(Annotated[str | None, AfterValidator(_lacks)], None),
    )


#: `formats:` of a scenario: a section per registered format (`engines.formats.FORMATS`), by
#: its name; a name of no format is an unknown field.
Formats = create_model(
    "Formats",
    __base__=_Strict,
    __doc__="What a scenario gives each table format, by the format's name.",
    **{name: (_section(f) | None, None) for name, f in FORMATS.items()},  # type: ignore[call-overload]
)


class ScenarioSpec(_Strict):
    """The content of one scenario file."""

    title: str = Field(min_length=1)
    description: str = ""
    baseline: bool = False
    table_types: list[TableType] = Field(default_factory=lambda: list(TABLE_TYPES), min_length=1)
    key: Identifier
    #: What the scenario gives each format of its own (`formats: {hudi: {ordering: ts}}`); read
    #: it through `ordering(format_name)`. It does not choose the formats a scenario runs on.
    formats: Formats = Field(default_factory=Formats)  # type: ignore[valid-type]
    #: The old spelling of the ordering field of the format runs began with (Hudi's precombine
    #: field, `formats: {hudi: {ordering: ...}}`), kept so that older scenario files load.
    precombine: Identifier | None = None
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

    def ordering(self, format_name: str) -> str | None:
        """The ordering field the scenario gives `format_name`'s tables (Hudi's precombine
        field): `formats.<name>.ordering`, or the old top-level `precombine` for the format
        runs began with; None where it gives none."""
        section = getattr(self.formats, format_name, None)
        if section is not None and section.ordering is not None:
            return section.ordering
        return self.precombine if format_name == ORIGINAL else None

    def ordering_path(self, format_name: str) -> str:
        """Where the scenario file gives `format_name`'s ordering field (or would give it): the
        field path errors name (`formats.hudi.ordering`, or the old `precombine`)."""
        section = getattr(self.formats, format_name, None)
        given = section is not None and section.ordering is not None
        if format_name == ORIGINAL and self.precombine is not None and not given:
            return "precombine"
        return f"formats.{format_name}.ordering"

    @property
    def write_order(self) -> str | None:
        """The column that decides which of two writes of one key wins, in every format's
        table: the ordering field given to the first format that has one (Hudi's precombine
        field). A format without one keeps the same rule in its writer (Iceberg's `MERGE`), so
        that one oracle holds for all. None: the later write wins."""
        for table_format in FORMATS.values():
            ordering = self.ordering(table_format.name) if table_format.ordering_field else None
            if ordering is not None:
                return ordering
        return None

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
