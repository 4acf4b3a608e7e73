"""A filter beside its table's `SELECT *` read: whether the rows it missed are its own loss.

A shaped read (`filter`, `count`, ... on the snapshot) is judged beside the `SELECT *` snapshot
of the same table, engine and variant (a control variant such as `+pushdown_off` beside the
variant it turns one path off in): its *plain* cell, measured before it. A filter that returns
fewer rows than match loses rows of its own only where the plain cell reads those rows right.
Where the plain cell misreads them (a renamed column read as NULL, a re-added column read with
the dropped one's values) or fails, the filter repeats that defect: its reason says so instead
of "rows lost without an error" (`harness.run.cells.shape_reasons`), and the reports count it
with `SELECT *`'s defect, not as rows lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from lakecompat.engines.shape import base_variant
from lakecompat.harness.results.causes import own_reason
from lakecompat.harness.results.outcomes import ROWS_LOST, Cell, Outcome
from lakecompat.harness.scenario.compare import SAMPLE_SIZE

#: The fields of a sample entry that are not the record key (`harness.scenario.compare`).
_NOT_KEY = {"column", "expected", "actual", "problem", "expected_type", "actual_type"}
#: How a comparison's differences about rows (not values) start.
_ROW_DIFFERENCES = ("rows missing:", "record key column", "duplicate rows")
#: How the reason of a filter that repeats its `SELECT *` read's defect goes on after how many
#: rows it returned (`harness.run.cells.beside_plain`).
AS_PLAIN = ", as SELECT * "
#: What the reports call the rows such a filter missed, where `SELECT *` misreads them ...
MISSING_AS_PLAIN = "rows missing as SELECT * misreads them"
#: ... and where `SELECT *` fails on the table.
MISSING_WHERE_PLAIN_FAILS = "rows missing where SELECT * fails"
#: The outcomes of a plain cell that did not read the table.
_FAILED = (Outcome.ERROR, Outcome.ENGINE_FAILED)
#: The column of the predicate a filter's or a count's reason names.
_PREDICATE = re.compile(r"(?:the filter `|count\(\*\) WHERE )([^ `]+)")


def plain_key(cell: Cell) -> tuple[str, ...]:
    """What a cell shares with its plain cell: table format, engine, table type, scenario and
    variant (the one a control variant turns one path off in)."""
    return (cell.format, cell.engine, cell.table_type, cell.scenario, base_variant(cell.variant))


def plain_cells(cells: Iterable[Cell]) -> dict[tuple[str, ...], Cell]:
    """Every `SELECT *` snapshot cell of `cells`, by `plain_key`."""
    return {plain_key(c): c for c in cells if c.shape == "all" and c.query_type == "snapshot"}


def answer_column(predicate_column: str) -> str:
    """The column of a `SELECT *` answer that holds a predicate's column: the struct column
    for a field inside it (`point` for `point.px`)."""
    return predicate_column.split(".", 1)[0]


def misread(plain: Cell, column: str, lost: Sequence[Any] | None = None) -> str | None:
    """How the plain cell misreads, in `column`, the rows whose keys are `lost` (None: rows not
    known, as for a count), in words that follow "as SELECT * " ("reads `product` NULL for
    those rows", "fails on the same table (...)"); None where it reads them right: it passed,
    its differences are about other columns, or its sample (which then holds every
    difference) shows them about other rows."""
    if plain.outcome in _FAILED:
        first = own_reason(plain.reason).splitlines()[0] if plain.reason else plain.outcome
        return f"fails on the same table ({first})"
    if plain.outcome is not Outcome.WRONG:
        return None
    parts = [p for p in own_reason(plain.reason).split("; ") if _about(p, column)]
    if not parts:
        return None
    whole = f"misreads the same table ({parts[0]})"
    sample = plain.evidence.sample
    if not lost or len(sample) >= SAMPLE_SIZE:
        return whole  # the sample may leave rows out: the column is all there is to go by
    if any(e.get("column") == column and _row(e) is None for e in sample):
        return whole  # the column is missing, or of another type, in every row
    wanted = {str(k) for k in lost}
    entries = [e for e in sample if _row(e) in wanted and e.get("column") in (None, column)]
    if {_row(e) for e in entries} != wanted:
        return None  # some of the rows SELECT * reads right: the filter lost those itself
    return _how(entries, column)


def _about(part: str, column: str) -> bool:
    """Whether one difference of a comparison is about `column`, or about rows."""
    return f"`{column}`" in part or part.startswith(_ROW_DIFFERENCES)


def _row(entry: dict[str, Any]) -> str | None:
    """The record key of the row a sample entry is about (missing, or a value), as text;
    None for an entry about no one row (a column, an extra row)."""
    if entry.get("problem") is not None:
        return None
    keys = [name for name in entry if name not in _NOT_KEY]
    return str(entry[keys[0]]) if keys else None


def _how(entries: list[dict[str, Any]], column: str) -> str:
    """What the plain cell reads for the lost rows, from its sample entries about them."""
    if any("column" not in e for e in entries):
        return "misses those rows too"
    if all(e.get("actual") is None for e in entries):
        return f"reads `{column}` NULL for those rows"
    return f"reads other values in `{column}` for those rows"


def missing_rows(cell: Cell, plain: Cell | None) -> str | None:
    """What the rows a shaped cell missed are, as the reports count them: `ROWS_LOST` (its
    own loss: `SELECT *` of its table, `plain`, reads them right or was not read),
    `MISSING_AS_PLAIN` or `MISSING_WHERE_PLAIN_FAILS` (it repeats that read's defect); None
    where it missed no rows. Results written before filters were judged beside `SELECT *`
    say "rows lost" of both: they are judged here again."""
    if cell.reason.startswith(ROWS_LOST):
        found = _PREDICATE.search(cell.reason)
        if plain is None or found is None:
            return ROWS_LOST
        if misread(plain, answer_column(found.group(1)), _missing_keys(cell)) is None:
            return ROWS_LOST
    elif AS_PLAIN not in cell.reason:
        return None
    if plain is not None and plain.outcome in _FAILED:
        return MISSING_WHERE_PLAIN_FAILS
    return MISSING_AS_PLAIN


def _missing_keys(cell: Cell) -> list[str] | None:
    """The keys of the rows a filter missed, from its sample (None where the sample may leave
    some out)."""
    sample = cell.evidence.sample
    if len(sample) >= SAMPLE_SIZE:
        return None
    rows = [_row(e) for e in sample if "column" not in e]
    return [row for row in rows if row is not None]
