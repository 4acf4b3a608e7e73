"""How an engine reads one table format: its reading part.

An engine (`engines.base.Engine`) lists one `Reading` per table format it reads, in
`Engine.readings`: the query types it runs on each of the format's table types, the variants
(reader configurations) it reads under, which of them keeps the engine's defaults, which match
a data file's columns otherwise, the filter controls, and why it lacks a query type. Nothing
here is special to a format: a new format is a new `Reading` beside the engine's others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from lakecompat.engines.formats import format_named


@dataclass(frozen=True)
class Variant:
    """A reader configuration that changes behaviour; each variant is its own matrix cell."""

    name: str
    settings: dict[str, str] = field(default_factory=dict)


_NONE: Mapping[Any, Any] = MappingProxyType({})


class Reading:
    """How one engine reads one table format (subclassed once per engine and format, or made
    with `reading`)."""

    #: The table format read (`engines.formats`).
    format: ClassVar[str]
    #: The query types the engine runs on the format's tables, per table type (`cow`, `mor`);
    #: the format's other query types are UNSUPPORTED cells.
    query_types: ClassVar[Mapping[str, tuple[str, ...]]]
    #: Reader configurations to read every table of the format under.
    variants: ClassVar[tuple[Variant, ...]] = (Variant("default"),)
    #: The variant that keeps the engine's own defaults (what a user gets who sets nothing):
    #: the reports' overview speaks for it. None: the first variant.
    default_variant: ClassVar[str | None] = None
    #: The variants (by name) that change how the engine matches a data file's columns to the
    #: table's (by position rather than by name, by field ids, through another reader):
    #: filters and projections are read under each of them too, since a filter can lose rows
    #: silently under one way of matching and not another.
    matching_variants: ClassVar[tuple[str, ...]] = ()
    #: The query shapes read under `matching_variants` (None: every shape the run reads).
    matching_shapes: ClassVar[tuple[str, ...] | None] = None
    #: Why the engine lacks a query type, where there is more to say than "it has none".
    unsupported: ClassVar[Mapping[str, str]] = _NONE
    #: Query types the engine lacks but whose table it can still read, by (table type, query
    #: type), with the reason: such cells are UNSUPPORTED, and in the default variant the
    #: evidence shows what reading the table anyway returns.
    probe_only: ClassVar[Mapping[tuple[str, str], str]] = _NONE

    @classmethod
    def default_variant_name(cls) -> str:
        """The name of the variant with the engine's own defaults."""
        return cls.default_variant or cls.variants[0].name

    @classmethod
    def supports(cls, table_type: str, query_type: str) -> bool:
        """Whether the engine runs `query_type` on the format's `table_type` tables."""
        return query_type in cls.query_types.get(table_type, ())

    @classmethod
    def unsupported_reason(cls, engine: str, table_type: str, query_type: str) -> str:
        """The reason of an UNSUPPORTED cell of `engine`."""
        kind = format_named(cls.format).kind(table_type)
        default = f"{engine} has no {query_type} query for {kind} tables"
        return cls.unsupported.get(query_type, default)

    @classmethod
    def pushdown_off(cls, variant: Variant) -> Variant | None:
        """`variant` with the engine's filter pushdown turned off (Parquet statistics,
        dictionaries, bloom filters, data skipping), so that a filter's cell can be told apart
        from the same query on the plain read path; None: no such setting (by default)."""
        return None

    @classmethod
    def filter_controls(cls, variant: Variant) -> list[Variant]:
        """The variants a filter is read in besides `variant`, each turning one of the
        engine's paths for filters off, so that a failure can be put down to the path whose
        control reads right (by default `pushdown_off`, where the engine has it)."""
        quiet = cls.pushdown_off(variant)
        return [quiet] if quiet is not None else []


def reading(table_format: str, **declared: Any) -> type[Reading]:
    """A `Reading` of `table_format` with the class attributes `declared` (`query_types`,
    `variants`, ...), for an engine that needs no methods of its own there."""
    name = f"{format_named(table_format).title}Reading"
    return type(name, (Reading,), {"format": table_format, **declared})
