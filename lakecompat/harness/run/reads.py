"""The reads of a table: each query type under each of an engine's variants with `SELECT *`,
and the query shapes (`harness.scenario.shapes`) on the snapshot under the engine's default
variant, a filter also under the engine's controls (its pushdown turned off, ...), and both
under each variant that matches columns otherwise (`Reading.matching_variants`).

Every part of the run that needs to know a table's cells (the plan's count, a resumed run's
check, the merge of shards, the reads themselves) asks here, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakecompat.engines.base import Engine, Variant
from lakecompat.engines.shape import ALL, Shape
from lakecompat.engines.table import table_query_types
from lakecompat.harness.scenario.model import Scenario
from lakecompat.harness.scenario.shapes import DEFAULT_SHAPES, SHAPES, shapes_for

#: The query type shapes other than `all` are read with.
SHAPED_QUERY_TYPE = "snapshot"
#: The shapes also read under the engine's controls (`Reading.filter_controls`: pushdown off).
PUSHDOWN_SHAPES = ("filter",)
#: `--variants`: `SELECT *` under every variant of an engine, or under its default only (what
#: a user who changed no setting reads: a quicker run).
VARIANT_CHOICES = ("all", "default")

_SHAPES: dict[tuple[str, str], list[Shape]] = {}


@dataclass(frozen=True)
class Read:
    """One cell's read: a query type, a variant and a shape."""

    query_type: str
    variant: Variant
    shape: Shape = ALL

    def key(
        self, engine: str, table_type: str, scenario: str, table_format: str = "hudi"
    ) -> tuple[str, ...]:
        """The key of the cell this read gives (`Cell.key`)."""
        variant, shape = self.variant.name, self.shape.name
        return (engine, table_type, self.query_type, scenario, variant, shape, table_format)


def scenario_shapes(scenario: Scenario, chosen: tuple[str, ...] = SHAPES) -> list[Shape]:
    """The shapes a scenario's tables are read with, of those `chosen`, `all` first."""
    cache_key = (scenario.id, scenario.spec.model_dump_json())
    if cache_key not in _SHAPES:
        _SHAPES[cache_key] = shapes_for(scenario.spec)
    return [shape for shape in _SHAPES[cache_key] if shape.name in chosen]


def shape_named(scenario: Scenario, name: str) -> Shape:
    """The shape called `name` of a scenario's reads (a recorded cell's `shape`)."""
    for shape in scenario_shapes(scenario):
        if shape.name == name:
            return shape
    raise ValueError(f"{scenario.id} has no query shape {name!r}: its steps changed no column")


def table_reads(
    engine: Engine | type[Engine],
    scenario: Scenario,
    table_type: str,
    chosen: tuple[str, ...] = DEFAULT_SHAPES,
    variants: str = "all",
    table_format: str = "hudi",
) -> list[Read]:
    """Every read of one engine (instance: the variants it has) for one table of
    `table_format`, in order; `variants` "default": `SELECT *` under the engine's default
    variant only. No reads for an engine that does not read the format."""
    if not engine.reads_format(table_format):
        return []
    reading = engine.reading(table_format)
    # An instance: the variants the run gave it; a class: its reading's own.
    own = reading.variants if isinstance(engine, type) else engine.variants_of(table_format)
    named = reading.default_variant_name()
    default = next((v for v in own if v.name == named), None)
    query_types = table_query_types(table_format, table_type)
    reads = [
        Read(query_type, variant)
        for query_type in query_types
        for variant in own
        if "all" in chosen and (variants == "all" or variant is default)
    ]
    if not engine.reads_shapes or SHAPED_QUERY_TYPE not in query_types:
        return reads
    # The format's filter controls (Hudi's data skipping off, ...) and the variants that
    # match columns otherwise (`Reading.matching_variants`). An instance that reads only
    # some of the variants (a lane) reads the shapes under those it has: the default's
    # where it has the default, and the matching ones it has.
    controls = reading.filter_controls(default) if default is not None else []
    matching = [v for v in own if variants == "all" and v.name in reading.matching_variants]
    if default is None and not matching:
        return reads
    for shape in scenario_shapes(scenario, chosen):
        if shape.name == "all":
            continue
        if default is not None:
            reads.append(Read(SHAPED_QUERY_TYPE, default, shape))
            if shape.name in PUSHDOWN_SHAPES:
                reads += [Read(SHAPED_QUERY_TYPE, control, shape) for control in controls]
        if reading.matching_shapes is not None and shape.name not in reading.matching_shapes:
            continue
        for variant in matching:
            reads.append(Read(SHAPED_QUERY_TYPE, variant, shape))
            # With its controls too: a filter that fails under a variant that matches columns
            # otherwise is told apart by the path whose control reads right.
            if shape.name in PUSHDOWN_SHAPES:
                reads += [
                    Read(SHAPED_QUERY_TYPE, control, shape)
                    for control in reading.filter_controls(variant)
                ]
    return reads
