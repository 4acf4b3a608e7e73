"""Every registered engine against every table format it declares, in the manner of a shared
backend suite: what an engine declares must exist in the format it reads, so that a new
engine or format that disagrees with the registry fails here rather than in a run."""

from __future__ import annotations

import pytest

from engines import engine_class, known_engines
from engines.base import Engine
from engines.formats import FORMATS, ORIGINAL, format_named
from engines.table import QUERY_TYPES

ENGINES = [engine_class(name) for name in known_engines()]


def _query_types(cls: type[Engine], table_format: str) -> dict[str, tuple[str, ...]]:
    if table_format == cls.formats[0]:
        return cls.query_types
    return cls.format_query_types.get(table_format, {})


def _unsupported(cls: type[Engine], table_format: str) -> dict[str, str]:
    if table_format == cls.formats[0]:
        return cls.unsupported
    return cls.format_unsupported.get(table_format, {})


def test_every_format_is_whole() -> None:
    assert ORIGINAL in FORMATS
    for name, kind in FORMATS.items():
        assert kind.name == name and kind.title
        assert set(kind.table_types()) == {"cow", "mor"}, name  # the scenarios' table types
        for types in kind.query_types.values():
            assert types and types[0] == "snapshot" and set(types) <= set(QUERY_TYPES), name
        every = {q for types in kind.query_types.values() for q in types}
        assert set(kind.history_query_types) <= every, name
        assert kind.version_option in ("table_version", "format_version"), name
    # Each format's tables have a folder of their own in a run, and one format's kinds are bare.
    assert len({k.tables_subfolder for k in FORMATS.values()}) == len(FORMATS)
    assert [k.name for k in FORMATS.values() if not k.named_in_kinds] == [ORIGINAL]
    with pytest.raises(ValueError, match="unknown table format 'delta'; known formats: hudi"):
        format_named("delta")


@pytest.mark.parametrize("cls", ENGINES, ids=lambda c: c.name)
def test_an_engine_declares_only_what_its_formats_have(cls: type[Engine]) -> None:
    assert cls.formats and set(cls.formats) <= set(FORMATS), cls.formats
    assert set(cls.format_query_types) <= set(cls.formats[1:])
    assert set(cls.format_variants) <= set(cls.formats[1:])
    assert set(cls.format_unsupported) <= set(cls.formats[1:])
    for table_format in cls.formats:
        kind = format_named(table_format)
        for table_type, types in _query_types(cls, table_format).items():
            assert table_type in kind.query_types, (table_format, table_type)
            assert set(types) <= set(kind.query_types[table_type]), (table_format, table_type)
        every = {q for types in kind.query_types.values() for q in types}
        assert set(_unsupported(cls, table_format)) <= every, table_format
    first = format_named(cls.formats[0]).query_types
    for table_type, query_type in cls.probe_only:
        assert query_type in first.get(table_type, ()), (table_type, query_type)
        assert not cls.supports(table_type, query_type), (table_type, query_type)


@pytest.mark.parametrize("cls", ENGINES, ids=lambda c: c.name)
def test_an_engine_s_variants_have_one_name_each(cls: type[Engine]) -> None:
    for table_format in cls.formats:
        names = [v.name for v in cls.variants_of(cls, table_format)]  # type: ignore[arg-type]
        assert names and len(names) == len(set(names)), (table_format, names)
        assert cls.default_variant_name(table_format) in names, table_format
    first = [v.name for v in cls.variants]
    assert set(cls.matching_variants) <= set(first), cls.matching_variants
