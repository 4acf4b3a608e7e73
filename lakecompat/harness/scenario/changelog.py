"""Comparing a changelog read with the oracle: several rows per key, one per change.

A changelog answer lists each row a snapshot inserted or deleted with `_change_type` and
`_change_ordinal` (`engines.table`). Engines name these columns alike but spell them
differently (Trino writes `insert` where Spark writes `INSERT`) and add columns about the
commit (snapshot ids, commit times) that the oracle does not model: those are left out. Rows
are matched by (change type, key, ordinal). A DELETE and an INSERT of the same row in the same
snapshot are no change: an engine that returns them (the unchanged rows of a data file a
copy-on-write update rewrote) is told so in a reason of its own, and the rest of its answer is
compared as well.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pyarrow as pa

from lakecompat.engines.table import CHANGE_ORDINAL, CHANGE_TYPE
from lakecompat.harness.scenario.compare import Comparison, compare

#: The column a changelog row is matched by: its change type, key and ordinal, as text.
CHANGE_KEY = "change"
#: Columns about the commit that engines add to changelog rows (Spark's snapshot id, Trino's
#: snapshot id and commit time, Delta's commit version and time): not part of what the oracle
#: says.
COMMIT_COLUMNS = (
    "_commit_snapshot_id",
    "_change_version_id",
    "_change_timestamp",
    "_commit_version",
    "_commit_timestamp",
)
_CHANGE_COLUMNS = (CHANGE_TYPE, CHANGE_ORDINAL)


def compare_changes(expected: pa.Table, answer: pa.Table, key: str) -> Comparison:
    """The comparison of a changelog `answer` with the oracle's `expected` changes."""
    answer = _normalised(answer)
    result = Comparison()
    lacking = [n for n in (key, *_CHANGE_COLUMNS) if n not in answer.column_names]
    if lacking:
        for name in lacking:
            result.note(
                f"column missing: `{name}`: changes cannot be matched",
                {"column": name, "problem": "missing"},
            )
        return result
    answer, carried = _without_carry_overs(answer, key)
    if carried:
        result.note(
            f"{len(carried)} unchanged row(s) returned as deleted and inserted again by the same "
            "snapshot (carry-over rows: the rows a copy-on-write write rewrote without changing "
            "them)",
            *({CHANGE_KEY: name, "problem": "carry-over"} for name in carried),
        )
    compared = compare(_keyed(expected, key), _keyed(answer, key), CHANGE_KEY)
    for reason, entries in compared.details:
        said = reason.replace("rows missing:", "changes missing:").replace(
            "rows extra:", "changes extra:"
        )
        result.note(said, *entries)
    return result


def _normalised(answer: pa.Table) -> pa.Table:
    """`answer` without the commit columns, `_change_type` in upper case and `_change_ordinal`
    as a 32-bit integer (how each engine spells them is not what is compared)."""
    answer = answer.drop_columns([n for n in COMMIT_COLUMNS if n in answer.column_names])
    names = answer.column_names
    if CHANGE_TYPE in names:
        kinds = [None if v is None else str(v).upper() for v in answer[CHANGE_TYPE].to_pylist()]
        answer = answer.set_column(
            names.index(CHANGE_TYPE), CHANGE_TYPE, pa.array(kinds, pa.string())
        )
    if CHANGE_ORDINAL in names and answer.schema.field(CHANGE_ORDINAL).type != pa.int32():
        ordinals = answer[CHANGE_ORDINAL].cast(pa.int32())
        answer = answer.set_column(names.index(CHANGE_ORDINAL), CHANGE_ORDINAL, ordinals)
    return answer


def _without_carry_overs(answer: pa.Table, key: str) -> tuple[pa.Table, list[str]]:
    """`answer` without the DELETE and INSERT pairs of one row in one snapshot, and the names
    of the rows left out; its rows in an order of their own (ordinal, change type, key,
    values), so that what is said of it does not depend on the order the engine returned."""
    rows = answer.to_pylist()
    identities = [(row[CHANGE_ORDINAL], _row_identity(row)) for row in rows]
    order = sorted(
        range(len(rows)),
        key=lambda i: (
            str(rows[i][CHANGE_ORDINAL]),
            str(rows[i][CHANGE_TYPE]),
            str(rows[i][key]),
            identities[i][1],
        ),
    )
    seen: dict[tuple[Any, str], Counter[str]] = {}
    for row, identity in zip(rows, identities, strict=True):
        seen.setdefault(identity, Counter())[str(row[CHANGE_TYPE])] += 1
    pairs = {identity: min(c["DELETE"], c["INSERT"]) for identity, c in seen.items()}
    left: Counter[tuple[tuple[Any, str], str]] = Counter()
    kept, carried = [], []
    for index in order:
        row, identity = rows[index], identities[index]
        kind = str(row[CHANGE_TYPE])
        if kind in ("DELETE", "INSERT") and left[identity, kind] < pairs[identity]:
            left[identity, kind] += 1
            if kind == "DELETE":
                carried.append(f"{key}={row[key]} in change {row[CHANGE_ORDINAL]}")
            continue
        kept.append(index)
    return answer.take(pa.array(kept, pa.int64())), carried


def _row_identity(row: dict[str, Any]) -> str:
    """A changelog row's values as text that equal rows share, its change columns left out."""
    values = {n: v for n, v in row.items() if n not in _CHANGE_COLUMNS}
    return json.dumps(values, sort_keys=True, default=repr)


def _keyed(table: pa.Table, key: str) -> pa.Table:
    """`table` with a first column naming each change: `INSERT id=3 in change 0` (with `#2`,
    ... for a second row of the same name)."""
    counts: Counter[str] = Counter()
    names = []
    for kind, value, ordinal in zip(
        table[CHANGE_TYPE].to_pylist(),
        table[key].to_pylist(),
        table[CHANGE_ORDINAL].to_pylist(),
        strict=True,
    ):
        name = f"{kind} {key}={value} in change {ordinal}"
        counts[name] += 1
        names.append(name if counts[name] == 1 else f"{name} #{counts[name]}")
    return table.add_column(0, CHANGE_KEY, pa.array(names, pa.string()))
