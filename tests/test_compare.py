"""compare(): one derived reason per kind of difference between an answer and the oracle."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from lakecompat.harness.scenario.changelog import compare_changes
from lakecompat.harness.scenario.compare import (
    SAMPLE_SIZE,
    Comparison,
    compare,
    jsonable,
    same_value,
)

TYPES = {"id": pa.int32(), "name": pa.string(), "origin": pa.string(), "qty": pa.int32()}
COLUMNS = {
    "id": [1, 2, 3],
    "name": ["apple", "banana", "cherry"],
    "origin": ["spain", "ecuador", "chile"],
    "qty": [10, 20, 30],
}


def table(columns: dict[str, list[Any]], types: dict[str, pa.DataType] | None = None) -> pa.Table:
    """A table of `columns`, typed by TYPES unless `types` says otherwise."""
    chosen = {**TYPES, **(types or {})}
    return pa.table({name: pa.array(values, chosen.get(name)) for name, values in columns.items()})


def answer(drop: tuple[str, ...] = (), **changes: list[Any]) -> pa.Table:
    """The expected columns with some replaced, added or dropped (in this order)."""
    columns = {**COLUMNS, **changes}
    return table({n: v for n, v in columns.items() if n not in drop})


def verdict(actual: pa.Table, want: pa.Table | None = None) -> Comparison:
    return compare(table(COLUMNS) if want is None else want, actual, "id")


def test_equal_tables_pass() -> None:
    result = verdict(table(COLUMNS))
    assert result.equal
    assert (result.reasons, result.sample) == ([], [])


def test_row_order_does_not_matter() -> None:
    assert verdict(table(COLUMNS).take([2, 0, 1])).equal


def test_hoodie_columns_are_ignored() -> None:
    meta = {"_hoodie_commit_time": ["1"] * 3, "_hoodie_record_key": ["1", "2", "3"]}
    assert verdict(table({**meta, **COLUMNS})).equal


def test_column_missing() -> None:
    result = verdict(answer(drop=("qty",)))
    assert result.reasons == ["column missing: `qty`"]
    assert result.sample == [{"column": "qty", "problem": "missing"}]


def test_unexpected_column() -> None:
    result = verdict(answer(note=["a", "b", "c"]))
    assert result.reasons == ["unexpected column: `note`"]
    assert result.sample == [{"column": "note", "problem": "unexpected"}]


def test_type_differs() -> None:
    actual = table(COLUMNS, {"qty": pa.int64()})
    result = verdict(actual)
    assert result.reasons == ["type differs: `qty` is int64, expected int32"]
    assert result.sample == [{"column": "qty", "expected_type": "int32", "actual_type": "int64"}]


def test_column_order_differs() -> None:
    result = verdict(table(COLUMNS).select(["id", "qty", "name", "origin"]))
    assert result.reasons == [
        "column order differs: got id, qty, name, origin; expected id, name, origin, qty"
    ]
    assert result.sample == [
        {
            "problem": "column order",
            "expected": ["id", "name", "origin", "qty"],
            "actual": ["id", "qty", "name", "origin"],
        }
    ]


def test_rows_missing() -> None:
    result = verdict(table(COLUMNS).slice(0, 2))
    assert result.reasons == ["rows missing: 1 of 3"]
    assert [str(e["id"]) for e in result.sample] == ["3"]


def test_rows_extra() -> None:
    extra = {"id": [4], "name": ["date"], "origin": ["iran"], "qty": [40]}
    result = verdict(pa.concat_tables([table(COLUMNS), table(extra)]))
    assert result.reasons == ["rows extra: 1"]
    assert [(str(e["id"]), e["problem"]) for e in result.sample] == [("4", "extra")]


def test_extra_rows_are_listed_in_key_order_whatever_order_the_engine_returned() -> None:
    # An engine that reads a table's files in parallel returns its rows in any order.
    extra = {"id": [9, 4, 7], "name": ["x", "y", "z"], "origin": ["a", "b", "c"], "qty": [1, 2, 3]}
    for rows in (extra, {name: values[::-1] for name, values in extra.items()}):
        result = verdict(pa.concat_tables([table(rows), table(COLUMNS)]))
        assert [e["id"] for e in result.sample] == [4, 7, 9]


def test_duplicate_rows() -> None:
    result = verdict(pa.concat_tables([table(COLUMNS), table(COLUMNS).slice(1, 1)]))
    assert result.reasons == ["duplicate rows: 4 rows for 3 keys"]


def test_nulls_where_values_were_expected() -> None:
    result = verdict(answer(qty=[10, None, None]))
    assert result.reasons == ["NULLs where values were expected in `qty` (2 of 3 rows)"]
    assert result.sample[0] == {"id": 2, "column": "qty", "expected": 20, "actual": None}


def test_values_of_another_column_read_by_position() -> None:
    # A positional reader puts `origin` into `name` and finds nothing for `origin`.
    result = verdict(answer(name=COLUMNS["origin"], origin=[None] * 3))
    assert result.reasons == [
        "`name` holds the values of column `origin` (3 of 3 rows): read by position",
        "NULLs where values were expected in `origin` (3 of 3 rows)",
    ]


def test_generic_wrong_values() -> None:
    result = verdict(answer(qty=[10, 21, 30]))
    assert result.reasons == ["wrong values in `qty` (1 of 3 rows)"]
    assert result.sample == [{"id": 2, "column": "qty", "expected": 20, "actual": 21}]


def test_record_key_missing_stops_row_matching() -> None:
    result = verdict(answer(drop=("id",), qty=[0, 0, 0]))
    assert result.reasons == [
        "column missing: `id`",
        "record key column `id` missing: rows cannot be matched",
    ]
    assert {"column": "id", "problem": "record key missing"} in result.sample


def test_keys_are_matched_by_text() -> None:
    result = verdict(table({**COLUMNS, "id": ["1", "2", "3"]}, {"id": pa.string()}))
    assert result.reasons[0] == "type differs: `id` is string, expected int32"
    assert not any(r.startswith(("rows missing", "rows extra")) for r in result.reasons)


def floats(*values: float | None) -> pa.Table:
    return table({"id": [1, 2, 3][: len(values)], "price": list(values)}, {"price": pa.float64()})


def test_nan_equals_nan() -> None:
    nan = float("nan")
    assert verdict(floats(nan, 1.5), floats(nan, 1.5)).equal
    result = verdict(floats(7.0, 1.5), floats(nan, 1.5))
    assert result.reasons == ["wrong values in `price` (1 of 2 rows)"]


@pytest.mark.parametrize(
    ("want", "got", "same"),
    [
        (None, None, True),
        (None, 0, False),
        (0, None, False),
        (float("nan"), float("nan"), True),
        (float("nan"), 1.0, False),
        (1.0, float("nan"), False),
        (1, 1.0, True),
        (Decimal("1.50"), 1.5, True),
        (2**40, 2**40, True),
        (True, 1, False),
        ("1", 1, False),
        (dt.date(2024, 1, 1), "2024-01-01", False),
        (dt.date(2024, 1, 1), dt.date(2024, 1, 1), True),
    ],
)
def test_same_value(want: Any, got: Any, same: bool) -> None:
    assert same_value(want, got) is same


def test_sample_is_capped() -> None:
    keys = list(range(20))
    want = table({"id": keys, "qty": keys})
    result = verdict(table({"id": keys, "qty": [k + 1 for k in keys]}), want)
    assert result.reasons == ["wrong values in `qty` (20 of 20 rows)"]
    assert len(result.sample) == SAMPLE_SIZE


def test_sample_cap_spans_several_reasons() -> None:
    keys = list(range(SAMPLE_SIZE))
    want = table({"id": keys, "name": ["x"] * len(keys), "qty": keys})
    actual = table({"id": keys, "name": ["y"] * len(keys), "qty": [-1] * len(keys)})
    result = verdict(actual, want)
    assert len(result.reasons) == 2
    assert len(result.sample) == SAMPLE_SIZE
    assert {e["column"] for e in result.sample} == {"name"}


def test_sample_is_json_serialisable() -> None:
    types = {"day": pa.date32(), "amount": pa.decimal128(10, 2), "ratio": pa.float64()}
    want = table(
        {"id": [1], "day": [dt.date(2024, 1, 1)], "amount": [Decimal("1.50")], "ratio": [1.0]},
        types,
    )
    actual = table(
        {"id": [1], "day": [dt.date(2024, 1, 2)], "amount": [Decimal("2.50")], "ratio": [math.inf]},
        types,
    )
    result = verdict(actual, want)
    text = json.dumps(result.sample, allow_nan=False)
    assert {(e["column"], e["expected"], e["actual"]) for e in json.loads(text)} == {
        ("day", "2024-01-01", "2024-01-02"),
        ("amount", "1.50", "2.50"),
        ("ratio", 1.0, "inf"),
    }


def test_jsonable_handles_nesting() -> None:
    value = {"a": [Decimal("1.0"), (dt.date(2024, 1, 1), float("nan"))], "b": None}
    assert jsonable(value) == {"a": ["1.0", ["2024-01-01", "nan"]], "b": None}


STAMP = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
UTC_US = pa.timestamp("us", tz="UTC")


def stamps(kind: pa.DataType, values: list[Any]) -> pa.Table:
    return table({"id": [1, 2], "t": values}, {"t": kind})


def test_a_timestamp_without_zone_stands_for_the_utc_instant() -> None:
    # Hive and Trino read a Spark TIMESTAMP through the Metastore's zone-less TIMESTAMP.
    want = stamps(UTC_US, [STAMP.replace(tzinfo=dt.UTC), None])
    assert verdict(stamps(pa.timestamp("us"), [STAMP, None]), want).equal
    shifted = verdict(stamps(pa.timestamp("us"), [STAMP.replace(hour=4), None]), want)
    assert shifted.reasons == ["wrong values in `t` (1 of 2 rows)"]


def test_timestamp_units_and_a_zone_where_none_belongs_still_differ() -> None:
    want = stamps(UTC_US, [STAMP.replace(tzinfo=dt.UTC), None])
    millis = verdict(stamps(pa.timestamp("ms"), [STAMP.replace(microsecond=123000), None]), want)
    assert millis.reasons[0] == "type differs: `t` is timestamp[ms, tz=UTC], expected " + (
        "timestamp[us, tz=UTC]"
    )
    local = stamps(pa.timestamp("us"), [STAMP, None])
    zoned = verdict(stamps(UTC_US, [STAMP.replace(tzinfo=dt.UTC), None]), local)
    assert zoned.reasons[0] == "type differs: `t` is timestamp[us, tz=UTC], expected timestamp[us]"


def test_binary_values_compare_as_bytes_and_show_as_base64() -> None:
    want = table({"id": [1], "b": [b"abc"]}, {"b": pa.binary()})
    assert verdict(table({"id": [1], "b": [b"abc"]}, {"b": pa.binary()}), want).equal
    wrong = verdict(table({"id": [1], "b": [b"abd"]}, {"b": pa.binary()}), want)
    assert wrong.sample == [{"id": 1, "column": "b", "expected": "YWJj", "actual": "YWJk"}]
    json.dumps(wrong.sample)


def _changes(*rows: tuple[int, str, int, str], lower: bool = False) -> pa.Table:
    """A changelog answer of (ordinal, change type, id, name) rows, with a commit column."""
    return pa.table(
        {
            "id": pa.array([r[2] for r in rows], pa.int32()),
            "name": pa.array([r[3] for r in rows], pa.string()),
            "_change_type": pa.array([r[1].lower() if lower else r[1] for r in rows]),
            "_change_ordinal": pa.array([r[0] for r in rows], pa.int64() if lower else pa.int32()),
            "_commit_snapshot_id": pa.array([77] * len(rows), pa.int64()),
        }
    )


EXPECTED_CHANGES = _changes(
    (0, "DELETE", 1, "apple"), (0, "INSERT", 1, "green apple")
).drop_columns(["_commit_snapshot_id"])


def test_a_changelog_matches_changes_whatever_the_engine_calls_them() -> None:
    # Trino spells the change type in lower case and the ordinal as a 64-bit integer here; the
    # commit columns are not the oracle's business. Row order does not matter.
    answer = _changes((0, "INSERT", 1, "green apple"), (0, "DELETE", 1, "apple"), lower=True)
    assert compare_changes(EXPECTED_CHANGES, answer, "id").equal


def test_a_changelog_names_carried_over_rows_and_still_compares_the_rest() -> None:
    answer = _changes(
        (0, "DELETE", 1, "apple"),
        (0, "INSERT", 1, "green apple"),
        (0, "DELETE", 2, "banana"),  # unchanged, in the file the update rewrote
        (0, "INSERT", 2, "banana"),
        (1, "INSERT", 3, "cherry"),  # a change the oracle does not have
    )
    compared = compare_changes(EXPECTED_CHANGES, answer, "id")
    assert compared.reasons[0].startswith("1 unchanged row(s) returned as deleted and inserted")
    assert {"change": "id=2 in change 0", "problem": "carry-over"} in compared.sample
    assert compared.reasons[1:] == ["changes extra: 1"]
    assert {"change": "INSERT id=3 in change 1", "problem": "extra"} in compared.sample
    # What is said does not depend on the order the engine returned the rows in.
    backwards = answer.take(pa.array(range(answer.num_rows - 1, -1, -1)))
    assert compare_changes(EXPECTED_CHANGES, backwards, "id").details == compared.details


def test_a_changelog_row_with_a_wrong_value_or_ordinal_is_a_difference() -> None:
    nulls = _changes((0, "DELETE", 1, "apple"), (0, "INSERT", 1, None))
    compared = compare_changes(EXPECTED_CHANGES, nulls, "id")
    assert compared.reasons == ["NULLs where values were expected in `name` (1 of 2 rows)"]
    later = _changes((0, "DELETE", 1, "apple"), (1, "INSERT", 1, "green apple"))
    compared = compare_changes(EXPECTED_CHANGES, later, "id")
    assert compared.reasons == ["changes missing: 1 of 2", "changes extra: 1"]
    untyped = _changes((0, "DELETE", 1, "apple")).drop_columns(["_change_type"])
    assert compare_changes(EXPECTED_CHANGES, untyped, "id").reasons == [
        "column missing: `_change_type`: changes cannot be matched"
    ]
