"""A failing cell's cause without what belongs to its table: whether two cells fail the same way.

A cell whose baseline cell (the same engine, format, table type, query type and variant on a
table without any schema change) fails *the same way* fails for a reason that is not about its
scenario's change. "The same way" is the same outcome and the same failure: for an `ERROR`, the
first line of the error with the table's names, paths, numbers and ids taken out; for a `WRONG`,
the same kinds of difference on the same columns, and nothing more.
"""

from __future__ import annotations

import re

from lakecompat.harness.results.outcomes import BASELINE_NOTE, BASELINE_OTHER, Cell, Outcome

#: The outcomes whose cells fail: a read that answered wrong, raised, or had no engine.
FAILING = (Outcome.WRONG, Outcome.ERROR, Outcome.ENGINE_FAILED)

_TABLE = re.compile(r"\bt_[a-z0-9_]+_(?:cow|mor)\b")
_PATH = re.compile(r"(?:file:)?(?:/[\w.=+@-]+)+/?")
_HEX = re.compile(r"\b[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
#: A name the run gives after its own folder: Spark's Iceberg catalog (`lakecompat_<hash of
#: the warehouse>`, `engines.spark.runtime.iceberg_catalog_name`).
_RUN_NAME = re.compile(r"\blakecompat_[0-9a-f]{12}\b")


def without_run_names(text: str) -> str:
    """`text` with the names the run gives after its own folder written `lakecompat`: an
    engine's message that names them (the writer refusing a change to `lakecompat_1915bc723d11`.
    `tables`.`t_...`) then gives the same reason in every run."""
    return _RUN_NAME.sub("lakecompat", text)


def own_reason(reason: str) -> str:
    """A reason without the note about its baseline that a run added after it."""
    for note in (BASELINE_NOTE, BASELINE_OTHER):
        reason = reason.split(f"; {note}", 1)[0]
    return reason


def failure_kind(cell: Cell) -> str | None:
    """What a failing cell's failure is, comparable between tables; None for a cell that does
    not fail."""
    if cell.outcome not in FAILING:
        return None
    reason = own_reason(cell.reason)
    if cell.outcome is Outcome.WRONG:
        # The kinds of difference, each with its columns, without counts and values.
        parts = sorted({_plain(part.split(" (")[0]) for part in reason.split("; ")})
        return f"{cell.outcome.value}: " + "; ".join(parts)
    first = reason.splitlines()[0] if reason else ""
    return f"{cell.outcome.value}: {_plain(first)}"


def same_failure(cell: Cell, baseline: Cell | None) -> bool:
    """Whether `cell` fails as its baseline cell does (and both fail)."""
    if baseline is None:
        return False
    kind = failure_kind(cell)
    return kind is not None and kind == failure_kind(baseline)


def _plain(text: str) -> str:
    """`text` without the table's name, paths, ids and numbers."""
    text = _PATH.sub("<path>", text)
    text = _TABLE.sub("<table>", text)
    text = _HEX.sub("<id>", text)
    return _NUMBER.sub("<n>", text).strip()


_NOTED = re.compile(
    re.escape(f"; {BASELINE_NOTE} (") + r"(?P<scenario>[^:()]+): (?P<outcome>[A-Z_]+)\)"
)


def unfounded_baseline_notes(cells: list[Cell]) -> list[str]:
    """The cells of a run whose reason says they fail without any schema change where the
    baseline cell it names (same engine, format, table type, query type and variant) does not
    fail the same way, each as `key: why`; empty when every such note holds."""
    baselines = {
        (c.scenario, c.engine, c.format, c.table_type, c.query_type, c.variant): c
        for c in cells
        if c.category == "baseline" and c.shape == "all"
    }
    found = []
    for cell in cells:
        noted = _NOTED.search(cell.reason)
        if noted is None:
            continue
        key = (noted["scenario"], cell.engine, cell.format, cell.table_type)
        baseline = baselines.get((*key, cell.query_type, cell.variant))
        if baseline is None:
            found.append(f"{cell.key}: names {noted['scenario']}, which has no such cell")
        elif not same_failure(cell, baseline) or baseline.outcome.value != noted["outcome"]:
            found.append(
                f"{cell.key}: {failure_kind(cell)} but {noted['scenario']}: "
                f"{failure_kind(baseline)}"
            )
    return found
