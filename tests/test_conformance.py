"""Every registered engine against every table format it declares, in the manner of a shared
backend suite: what an engine declares must exist in the format it reads, so that a new
engine or format that disagrees with the registry fails here rather than in a run."""

from __future__ import annotations

import pytest

from lakecompat.engines import engine_class, known_engines
from lakecompat.engines.base import Engine, Reading
from lakecompat.engines.formats import FORMATS, ORIGINAL, format_named
from lakecompat.engines.table import QUERY_TYPES

ENGINES = [engine_class(name) for name in known_engines()]


def test_every_format_is_whole() -> None:
    assert ORIGINAL in FORMATS
    for name, kind in FORMATS.items():
        assert kind.name == name and kind.title
        assert set(kind.table_types()) == {"cow", "mor"}, name  # the scenarios' table types
        for types in kind.query_types.values():
            assert types and types[0] == "snapshot" and set(types) <= set(QUERY_TYPES), name
        every = {q for types in kind.query_types.values() for q in types}
        assert set(kind.history_query_types) <= every, name
        # Its version option is a field of its own (a CLI option, a point's, a run record's).
        assert kind.version_option and kind.version_option not in FORMATS, name
        assert kind.version_help and kind.release_help and kind.default_release, name
        assert kind.ordering_field or not kind.ordering_required, name
    # What a scenario may give a format: the old top-level `precombine` is the original
    # format's ordering field, and a step setting's prefix names one format only.
    assert FORMATS[ORIGINAL].ordering_field
    prefixes = [k.writer_option_prefix for k in FORMATS.values() if k.writer_option_prefix]
    assert not [(a, b) for a in prefixes for b in prefixes if a != b and a.startswith(b)]
    assert len(set(prefixes)) == len(prefixes)
    # Each format's tables have a folder of their own in a run, and one format's kinds are bare.
    assert len({k.tables_subfolder for k in FORMATS.values()}) == len(FORMATS)
    assert [k.name for k in FORMATS.values() if not k.named_in_kinds] == [ORIGINAL]
    with pytest.raises(ValueError, match="unknown table format 'paimon'; known formats: hudi"):
        format_named("paimon")
    versions = [k.version_option for k in FORMATS.values()]
    assert len(set(versions)) == len(versions)


@pytest.mark.parametrize("cls", ENGINES, ids=lambda c: c.name)
def test_an_engine_declares_only_what_its_formats_have(cls: type[Engine]) -> None:
    assert cls.formats and set(cls.formats) <= set(FORMATS), cls.formats
    assert len(set(cls.formats)) == len(cls.formats), "one reading per format"
    for reading in cls.readings:
        assert issubclass(reading, Reading) and cls.reading(reading.format) is reading
        kind = format_named(reading.format)
        for table_type, types in reading.query_types.items():
            assert table_type in kind.query_types, (reading.format, table_type)
            assert set(types) <= set(kind.query_types[table_type]), (reading.format, table_type)
        every = {q for types in kind.query_types.values() for q in types}
        assert set(reading.unsupported) <= every, reading.format
        for table_type, query_type in reading.probe_only:
            assert query_type in kind.query_types.get(table_type, ()), (table_type, query_type)
            assert not cls.supports(table_type, query_type, reading.format), query_type
    with pytest.raises(KeyError, match=f"{cls.name} does not read"):
        cls.reading("parquet")


@pytest.mark.parametrize("cls", ENGINES, ids=lambda c: c.name)
def test_an_engine_s_variants_have_one_name_each(cls: type[Engine]) -> None:
    for reading in cls.readings:
        names = [v.name for v in reading.variants]
        assert names and len(names) == len(set(names)), (reading.format, names)
        assert cls.default_variant_name(reading.format) in names, reading.format
        assert set(reading.matching_variants) <= set(names), reading.matching_variants
        # A control turns one path off in a variant: its name says which, after the variant's.
        for variant in reading.variants:
            for control in reading.filter_controls(variant):
                assert control.name.startswith(variant.name + "+"), control.name
