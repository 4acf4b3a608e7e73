"""Table formats as everything else knows them: one module per format (`hudi.py`,
`iceberg.py`, `delta.py`), each a `TableFormat` value, registered in `FORMATS` in the order
runs write and reports list them. Generic code asks the registry (`format_named(name)`) instead of
naming a format; a new format is a module here, its writer (`harness/writer/<format>/`) and
one line in `FORMATS`.
"""

from __future__ import annotations

from lakecompat.engines.formats.delta import DELTA
from lakecompat.engines.formats.hudi import HUDI
from lakecompat.engines.formats.iceberg import ICEBERG
from lakecompat.engines.formats.model import TableFormat

__all__ = [
    "FORMATS",
    "ORIGINAL",
    "TableFormat",
    "format_named",
    "format_names",
    "format_words",
    "meta_prefixes",
]

#: Every table format lakecompat writes and reads, by name, in the order runs write them.
FORMATS: dict[str, TableFormat] = {f.name: f for f in (HUDI, ICEBERG, DELTA)}
#: The format lakecompat began with: a run record, an option or a cell that names no format
#: (written before there were others) means this one.
ORIGINAL = HUDI.name


def format_named(name: str) -> TableFormat:
    """The format called `name`; ValueError names the known formats."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise ValueError(f"unknown table format {name!r}; known formats: {known}") from None


def meta_prefixes() -> tuple[str, ...]:
    """The prefixes of every format's bookkeeping columns (`TableFormat.meta_prefix`)."""
    return tuple(f.meta_prefix for f in FORMATS.values() if f.meta_prefix)


def format_words(joined: str = "or") -> str:
    """The formats' titles, for help text: `Hudi, Iceberg or Delta`."""
    titles = [f.title for f in FORMATS.values()]
    return f"{', '.join(titles[:-1])} {joined} {titles[-1]}" if len(titles) > 1 else titles[0]


def format_names() -> tuple[str, ...]:
    """The names of every registered format, in registry order."""
    return tuple(FORMATS)
