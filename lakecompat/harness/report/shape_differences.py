"""Where a query shape reads a table differently from `SELECT *`.

A filtered or projected read takes other paths through a reader (column pruning, statistics,
bloom filters), so it can fail, or lose rows, on a table that `SELECT *` reads right, and the
other way round. This lists every shaped cell whose outcome differs from the `SELECT *`
snapshot of the same table under the same variant (a control variant, `+pushdown_off` or
`+data_skipping_off`, is compared with the variant it turns one path off in), grouped by engine
and cause. A filter whose missing rows `SELECT *` misreads too is not said to lose rows: it
repeats `SELECT *`'s defect (`harness.results.plain_reads`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from lakecompat.engines.shape import base_variant, control_of
from lakecompat.harness.report.overview import NOT_READ, control_words
from lakecompat.harness.report.overview_markdown import format_title
from lakecompat.harness.results.outcomes import ROWS_LOST, Cell, Outcome
from lakecompat.harness.results.plain_reads import missing_rows, plain_cells, plain_key


@dataclass(frozen=True)
class Difference:
    """A shaped cell and the `SELECT *` cell of the same table it differs from."""

    cell: Cell
    plain: Cell


def differences(cells: list[Cell]) -> list[Difference]:
    """Every shaped cell whose outcome is not its table's `SELECT *` snapshot outcome, in the
    run's order (shaped cells not read, `UNSUPPORTED` or `REJECTED`, are left out)."""
    plains = plain_cells(cells)
    found = []
    for cell in cells:
        if cell.shape == "all" or cell.outcome in NOT_READ:
            continue
        other = plains.get(plain_key(cell))
        if other is not None and other.outcome is not cell.outcome:
            found.append(Difference(cell, other))
    return found


def cause(cell: Cell, plain: Cell | None = None) -> str:
    """What went wrong, without the names and values of one table: `rows lost without an
    error` (only where `plain`, the table's `SELECT *` cell, reads the rows right), rows
    missing as `SELECT *` misreads them or where it fails, the error's message up to what
    names a column or file, or `wrong values`."""
    if cell.outcome is Outcome.PASS:
        return "reads right"
    missing = missing_rows(cell, plain)
    if missing is not None:
        return missing
    if cell.outcome is Outcome.ERROR:
        first = cell.reason.splitlines()[0] if cell.reason else "an error"
        return re.split(r"""[`"'(\[]""", first, maxsplit=1)[0].strip(" :;,") or first
    return "wrong values"


def differences_markdown(cells: list[Cell]) -> list[str]:
    """The Markdown section: per table format and engine, then cause, a line per scenario with
    its table types, shapes and variant, and what `SELECT *` gives on the same tables."""
    found = differences(cells)
    if not found:
        return []
    groups: dict[tuple[str, str, str], list[Difference]] = defaultdict(list)
    for difference in found:
        cell = difference.cell
        groups[(cell.format, cell.engine, cause(cell, difference.plain))].append(difference)
    lines = [
        "",
        "## Where a query shape reads differently from SELECT *",
        "",
        f"{len(found)} shaped cells differ from the `SELECT *` snapshot of the same table "
        "(same table format, engine and variant; a control variant, such as `+pushdown_off`, "
        "against the one it changes).",
    ]
    # Rows lost without an error first, the most dangerous outcome: the engines that lose
    # rows, then within each engine that cause.
    losing = {(f, e) for f, e, c in groups if c == ROWS_LOST}
    formats = list(dict.fromkeys(c.format for c in cells))
    order = sorted(
        groups,
        key=lambda k: (formats.index(k[0]), (k[0], k[1]) not in losing, k[1], k[2] != ROWS_LOST),
    )
    heading = None
    for key in order:
        if key[:2] != heading:
            heading = key[:2]
            lines += ["", f"### {key[1]} · {format_title(key[0])}", ""]
        rows = groups[key]
        lines.append(f"- **{key[2]}** ({len(rows)} cell{'s' if len(rows) != 1 else ''}):")
        # A line per scenario and variant: the shapes are read under several variants (the
        # default and those that match columns otherwise), each with its controls.
        by_scenario: dict[tuple[str, str], list[Difference]] = defaultdict(list)
        for row in rows:
            by_scenario[(row.cell.scenario, base_variant(row.cell.variant))].append(row)
        lines += [_scenario_line(key[0], found) for key, found in by_scenario.items()]
    return lines


def _scenario_line(scenario: str, rows: list[Difference]) -> str:
    """`` - `scenario` (cow, mor · filter, with pushdown off · `variant`): WRONG where
    SELECT * is PASS``."""
    tables = ", ".join(dict.fromkeys(row.cell.table_type for row in rows))
    controls: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        control = control_of(row.cell.variant)
        if control not in controls[row.cell.shape]:
            controls[row.cell.shape].append(control)
    reads = ", ".join(shape + _controls_said(found) for shape, found in controls.items())
    variant = base_variant(rows[0].cell.variant)
    outcomes = "; ".join(
        dict.fromkeys(
            f"{r.cell.outcome.value} where SELECT * is {r.plain.outcome.value}" for r in rows
        )
    )
    return f"  - `{scenario}` ({tables} · {reads} · `{variant}`): {outcomes}"


def _controls_said(controls: list[str]) -> str:
    """How a shape's reads are said after its name: "" (the variant itself only), " with
    pushdown off" (one control only), else each: " (as is; with data skipping off)"."""
    words = [f"with {control_words(c)}" if c else "as is" for c in controls]
    if controls == [""]:
        return ""
    if len(controls) == 1:
        return f" {words[0]}"
    return f" ({'; '.join(words)})"
