"""The column type shapes a scenario uses: each path from a column's type down to a simple
type (`array<struct<sku:string,qty:int>>` is `array<struct<string>>` and
`array<struct<int>>`). A run reads the baselines that carry the shapes of its scenarios
(`harness.run.plan.select_scenarios`)."""

from __future__ import annotations

from collections.abc import Iterator

from lakecompat.harness.scenario import model as sc
from lakecompat.harness.scenario.types import ColumnType

#: The baseline every run reads: simple columns only, an engine's general failures.
ALWAYS_BASELINE = "baseline/no_change"


def spelled(path: tuple[str, ...]) -> str:
    """A path of type names as a type: ("array", "struct", "int") is `array<struct<int>>`,
    ("map", "int") is `map<string,int>` (struct field names are left out)."""
    head, rest = path[0], path[1:]
    if not rest:
        return head
    opened = "map<string," if head == "map" else f"{head}<"
    return f"{opened}{spelled(rest)}>"


def type_shapes(ctype: ColumnType, path: tuple[str, ...] = ()) -> set[str]:
    """Every path from a column's type down to a simple type. A decimal keeps its precision
    and scale (they decide how Parquet stores it: 32-bit, 64-bit, bytes)."""
    if not ctype.is_nested:
        return {spelled((*path, str(ctype)))}
    return {s for _, child in ctype.fields for s in type_shapes(child, (*path, ctype.name))}


def spelled_types(spec: sc.ScenarioSpec) -> Iterator[ColumnType]:
    """Every type a scenario file spells: its columns, an upsert's own schema, an added
    column, the target of a type change."""
    for column in spec.schema_:
        yield column.type
    for step in spec.steps:
        if isinstance(step, sc.Upsert) and step.schema_ is not None:
            yield from (column.type for column in step.schema_)
        elif isinstance(step, sc.AddColumn):
            yield step.column.type
        elif isinstance(step, sc.ChangeType):
            yield step.to


def scenario_shapes(spec: sc.ScenarioSpec) -> set[str]:
    """Every type shape a scenario's table holds at some point."""
    return {shape for ctype in spelled_types(spec) for shape in type_shapes(ctype)}
