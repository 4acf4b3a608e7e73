"""Scenario files: the declarative model, loading and validation with file-and-field errors."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.types import ColumnType, parse_type

IDENTIFIER_PATTERN = r"^[a-z_][a-z0-9_]{0,63}$"
Identifier = Annotated[str, Field(pattern=IDENTIFIER_PATTERN)]
TableType = Literal["cow", "mor"]
TABLE_TYPES: tuple[str, ...] = ("cow", "mor")
MAX_ROWS = 10_000


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps dates as text: `coerce` checks them and names the field."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


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


class Insert(_Strict):
    """Write rows whose keys are new (Hudi `insert`)."""

    op: Literal["insert"]
    rows: Rows


class Upsert(_Strict):
    """Write rows (Hudi `upsert`); a `schema` of its own makes it a schema-on-write change."""

    op: Literal["upsert"]
    rows: Rows
    schema_: list[ColumnSpec] | None = Field(default=None, alias="schema", min_length=1)


class Delete(_Strict):
    """Delete rows by record key."""

    op: Literal["delete"]
    keys: Annotated[list[Any], Field(min_length=1, max_length=MAX_ROWS)]


class AddColumn(_Strict):
    """`ALTER TABLE ... ADD COLUMNS`, at the end, `first: true` or `after: <column>`."""

    op: Literal["add_column"]
    column: ColumnSpec
    after: Identifier | None = None
    first: bool = False


class DropColumn(_Strict):
    op: Literal["drop_column"]
    column: Identifier


class RenameColumn(_Strict):
    op: Literal["rename_column"]
    column: Identifier
    to: Identifier


class ChangeType(_Strict):
    """`ALTER TABLE ... ALTER COLUMN ... TYPE`."""

    op: Literal["change_type"]
    column: Identifier
    to: ColumnType

    @field_validator("to", mode="before")
    @classmethod
    def _parse_type(cls, value: Any) -> ColumnType:
        return value if isinstance(value, ColumnType) else parse_type(value)


class Compaction(_Strict):
    """Schedule and run a compaction (merge-on-read only; nothing to do for copy-on-write)."""

    op: Literal["compaction"]


Step = Annotated[
    Insert | Upsert | Delete | AddColumn | DropColumn | RenameColumn | ChangeType | Compaction,
    Field(discriminator="op"),
]
SCHEMA_OPS = ("add_column", "drop_column", "rename_column", "change_type")
OPS = ("insert", "upsert", "delete", *SCHEMA_OPS, "compaction")


class ScenarioSpec(_Strict):
    """The content of one scenario file."""

    title: str = Field(min_length=1)
    description: str = ""
    baseline: bool = False
    table_types: list[TableType] = Field(default_factory=lambda: list(TABLE_TYPES), min_length=1)
    key: Identifier
    precombine: Identifier
    schema_: list[ColumnSpec] = Field(alias="schema", min_length=1, max_length=200)
    rows: Rows
    steps: list[Step] = Field(default_factory=list, max_length=100)


@dataclass(frozen=True)
class Scenario:
    """A validated scenario and where it came from; `id` is its path below the scenarios folder."""

    id: str
    path: Path
    spec: ScenarioSpec

    @property
    def category(self) -> str:
        return self.id.split("/")[0] if "/" in self.id else "uncategorized"


class ScenarioError(ValueError):
    """A scenario file is invalid; the message names the file, the field and what was expected."""

    def __init__(self, path: Path, field: str, message: str) -> None:
        self.path, self.field = path, field
        where = f"{path}: {field}" if field else str(path)
        super().__init__(f"{where}: {message}")


def load_scenario(path: Path, root: Path) -> Scenario:
    """Read and validate one scenario file, including a dry run of its steps by the oracle."""
    from harness.oracle import StepError, evolve

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except (yaml.YAMLError, ValueError) as exc:
        raise ScenarioError(path, "", f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(path, "", "expected a mapping with title, key, schema, rows, steps")
    try:
        spec = ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ScenarioError(path, _field_path(first["loc"]), first["msg"]) from None
    scenario = Scenario(path.relative_to(root).with_suffix("").as_posix(), path, spec)
    try:
        evolve(spec)
    except StepError as exc:
        raise ScenarioError(path, exc.field, str(exc)) from None
    return scenario


def load_scenarios(root: Path, pattern: str | None = None) -> list[Scenario]:
    """Every scenario below `root` whose id matches the glob `pattern`, baselines first."""
    if not root.is_dir():
        raise ScenarioError(root, "", "scenario folder not found")
    paths = sorted(p for p in root.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
    scenarios = [load_scenario(p, root) for p in paths]
    if pattern:
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        scenarios = [s for s in scenarios if any(fnmatch.fnmatch(s.id, g) for g in globs)]
    return sorted(scenarios, key=lambda s: (not s.spec.baseline, s.id))


def _field_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for position, item in enumerate(loc):
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif not (position == 2 and loc[0] == "steps" and item in OPS):
            parts.append(("." if parts else "") + str(item).rstrip("_"))
    return "".join(parts)
