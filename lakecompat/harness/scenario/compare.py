"""Typed, keyed comparison of an engine's answer with the oracle, with reasons derived from it."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa

from lakecompat.engines.answers import binary_text, nested_as_json
from lakecompat.engines.formats import meta_prefixes

#: The prefixes of the formats' bookkeeping columns (`TableFormat.meta_prefix`).
META_PREFIXES = meta_prefixes()
SAMPLE_SIZE = 8


@dataclass
class Comparison:
    """The verdict: no reasons means the answer equals the oracle's."""

    reasons: list[str] = field(default_factory=list)
    sample: list[dict[str, Any]] = field(default_factory=list)
    #: Every reason with all of its entries (the sample keeps a few), for words of one's own.
    details: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.reasons

    def note(self, reason: str, *entries: dict[str, Any]) -> None:
        self.reasons.append(reason)
        self.details.append((reason, [jsonable(e) for e in entries]))
        room = SAMPLE_SIZE - len(self.sample)
        self.sample.extend(jsonable(e) for e in entries[: max(room, 0)])


def data_columns(table: pa.Table) -> pa.Table:
    """The table without the formats' bookkeeping columns (`META_PREFIXES`)."""
    keep = [n for n in table.column_names if not n.startswith(META_PREFIXES)]
    return table.select(keep)


def utc_wall_clock(expected: pa.Table, actual: pa.Table) -> pa.Table:
    """`actual` with each timestamp without time zone read as UTC where `expected` has UTC.

    Through the Metastore Hive and Trino know one timestamp type, TIMESTAMP, under which
    Hudi's hive sync (and lakecompat) registers both Spark's TIMESTAMP and TIMESTAMP_NTZ; with
    every engine in UTC its wall clock is the instant in UTC. So an answer without a zone
    stands for a TIMESTAMP column, while an answer *with* a zone where the table has a
    TIMESTAMP_NTZ stays a type difference. Units are kept: milliseconds still differ.
    """
    columns = []
    for index, column_field in enumerate(actual.schema):
        column = actual.column(index)
        kind = column_field.type
        name = column_field.name
        if pa.types.is_timestamp(kind) and kind.tz is None and name in expected.column_names:
            want = expected.schema.field(name).type
            if pa.types.is_timestamp(want) and want.tz == "UTC":
                column = column.cast(pa.timestamp(kind.unit, tz="UTC"))
        columns.append(column)
    names = actual.column_names
    return pa.Table.from_arrays(columns, names=names) if names else actual


def compare(expected: pa.Table, actual: pa.Table, key: str) -> Comparison:
    """Compare column sets, types, order, rows by `key`, then values cell by cell."""
    expected = nested_as_json(expected)
    actual = utc_wall_clock(expected, nested_as_json(data_columns(actual)))
    result = Comparison()
    want, got = expected.column_names, actual.column_names
    for name in want:
        if name not in got:
            result.note(f"column missing: `{name}`", {"column": name, "problem": "missing"})
    for name in got:
        if name not in want:
            result.note(f"unexpected column: `{name}`", {"column": name, "problem": "unexpected"})
    common = [n for n in want if n in got]
    _compare_types(expected, actual, common, result)
    if [n for n in got if n in common] != common:
        order = [n for n in got if n in common]
        result.note(
            f"column order differs: got {', '.join(order)}; expected {', '.join(common)}",
            {"problem": "column order", "expected": common, "actual": order},
        )
    if key not in got:
        result.note(
            f"record key column `{key}` missing: rows cannot be matched",
            {"column": key, "problem": "record key missing"},
        )
        return result
    _compare_rows(expected, actual, key, common, result)
    return result


def _compare_types(expected: pa.Table, actual: pa.Table, names: list[str], out: Comparison) -> None:
    for name in names:
        want, got = expected.schema.field(name).type, actual.schema.field(name).type
        if want != got:
            out.note(
                f"type differs: `{name}` is {got}, expected {want}",
                {"column": name, "expected_type": str(want), "actual_type": str(got)},
            )


def _in_order(keys: list[Any]) -> list[Any]:
    """`keys` sorted (by their text when they cannot be compared with each other)."""
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=repr)


def _compare_rows(
    expected: pa.Table, actual: pa.Table, key: str, common: list[str], out: Comparison
) -> None:
    want = _by_key(expected.to_pylist(), key)
    got_rows = actual.to_pylist()
    got = _by_key(got_rows, key)
    if len(got) != len(got_rows):
        out.note(f"duplicate rows: {len(got_rows)} rows for {len(got)} keys")
    missing = [k for k in want if k not in got]
    # in key order, not in the order the engine returned them (which may differ between runs)
    extra = _in_order([k for k in got if k not in want])
    if missing:
        out.note(
            f"rows missing: {len(missing)} of {len(want)}", *({key: want[k][key]} for k in missing)
        )
    if extra:
        out.note(
            f"rows extra: {len(extra)}", *({key: got[k][key], "problem": "extra"} for k in extra)
        )
    matched = [k for k in want if k in got]
    for name in common:
        wrong = [k for k in matched if not same_value(want[k][name], got[k][name])]
        if wrong:
            out.note(
                _value_reason(name, wrong, want, got, len(matched)),
                *(
                    {
                        key: want[k][key],
                        "column": name,
                        "expected": want[k][name],
                        "actual": got[k][name],
                    }
                    for k in wrong
                ),
            )


def _value_reason(
    name: str,
    wrong: list[Any],
    want: dict[Any, dict[str, Any]],
    got: dict[Any, dict[str, Any]],
    total: int,
) -> str:
    share = f"{len(wrong)} of {total} rows"
    if all(got[k][name] is None for k in wrong):
        return f"NULLs where values were expected in `{name}` ({share})"
    for other in (n for n in want[wrong[0]] if n != name):
        if all(same_value(want[k][other], got[k][name]) for k in wrong):
            return f"`{name}` holds the values of column `{other}` ({share}): read by position"
    return f"wrong values in `{name}` ({share})"


def _by_key(rows: list[dict[str, Any]], key: str) -> dict[Any, dict[str, Any]]:
    return {_key_of(r[key]): r for r in rows}


def _key_of(value: Any) -> Any:
    # Keys are matched by their text so that an engine answering `1` as a string still matches.
    return str(value)


def same_value(want: Any, got: Any) -> bool:
    """Value equality that treats NaN as equal and compares numbers across Python types."""
    if want is None or got is None:
        return want is got
    if isinstance(want, float) and isinstance(got, float) and math.isnan(want):
        return math.isnan(got)
    if _is_number(want) and _is_number(got):
        return Decimal(str(want)) == Decimal(str(got)) or want == got
    return type(want) is type(got) and want == got


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def jsonable(value: Any) -> Any:
    """A JSON-friendly copy of a sample entry (dates and decimals as text, bytes as base64)."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dt.date | Decimal):
        return str(value)
    if isinstance(value, bytes):
        return binary_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
