"""ISSUE.md's words for the differences between the rows a query returns and the table's."""

from __future__ import annotations

import pyarrow as pa

from lakecompat.harness.repro.issue import _cause, _in_words
from lakecompat.harness.scenario.changelog import CHANGE_KEY, compare_changes
from lakecompat.harness.scenario.compare import compare

EXPECTED = pa.table(
    {
        "id": pa.array([1, 2, 3], pa.int32()),
        "product": ["apple", "banana", "cherry"],
        "qty": pa.array([10, 20, 30], pa.int32()),
    }
)


def words(actual: pa.Table) -> list[str]:
    return [_in_words(r, e, "id") for r, e in compare(EXPECTED, actual, "id").details]


def test_nulls_and_wrong_values_name_the_rows_and_what_they_hold() -> None:
    actual = EXPECTED.set_column(1, "product", pa.array([None, None, "cherry"], pa.string()))
    actual = actual.set_column(2, "qty", pa.array([10, 21, 30], pa.int32()))
    assert words(actual) == [
        "The query returns NULL for column `product` where the rows hold 'apple' (`id` 1), "
        "'banana' (`id` 2).",
        "For column `qty` the query returns 21 where the row (`id` 2) holds 20.",
    ]


def test_columns_types_and_rows_that_differ_are_said_in_words() -> None:
    actual = pa.table(
        {
            "id": pa.array([1, 2, 4], pa.int32()),
            "product": ["apple", "banana", "date"],
            "qty": pa.array([10, 20, 40], pa.int64()),
            "extra": [1, 2, 3],
        }
    )
    assert words(actual) == [
        "The answer has a column `extra` that the table does not have.",
        "Column `qty` comes back as int64; the table's type is int32.",
        "The answer lacks the rows with `id` 3.",
        "The answer has rows the table does not hold (`id` 4).",
    ]
    missing = words(EXPECTED.drop_columns(["qty"]))
    assert missing == ["The answer has no column `qty`, which the table has."]


def test_an_error_is_named_by_its_innermost_cause() -> None:
    hive = (
        "QueryError: Error while compiling statement: FAILED: Execution Error, return code 2 "
        "from org.apache.hadoop.hive.ql.exec.mr.MapRedTask; the MapReduce job failed with "
        "java.lang.UnsupportedOperationException: Cannot inspect org.apache.hadoop.io.NullWritable"
    )
    assert (
        _cause(hive)
        == "UnsupportedOperationException: Cannot inspect org.apache.hadoop.io.NullWritable"
    )
    assert _cause("x " * 100, limit=10) == "x x x x x …"


def test_a_changelog_s_differences_name_the_changes() -> None:
    def changes(names: list[str | None]) -> pa.Table:
        return pa.table(
            {
                "id": pa.array([1, 1], pa.int32()),
                "product": pa.array(names, pa.string()),
                "_change_type": ["DELETE", "INSERT"],
                "_change_ordinal": pa.array([0, 0], pa.int32()),
            }
        )

    expected, actual = changes(["apple", "green apple"]), changes(["apple", None])
    details = compare_changes(expected, actual, "id").details
    assert [_in_words(r, e, CHANGE_KEY) for r, e in details] == [
        "The query returns NULL for column `product` where the rows hold 'green apple' "
        "(`change` INSERT id=1 in change 0)."
    ]
