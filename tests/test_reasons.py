"""A failure's reason is the same text on every run: what belongs to one execution (Spark's
task numbers, Java identity hashes, Iceberg snapshot ids) is taken out, and what one execution
orders its own way (a Python set's strings) is put in one order."""

from __future__ import annotations

from lakecompat.engines.errors import QueryError, describe_error
from lakecompat.engines.hive.failures import causes_line
from lakecompat.engines.reasons import stable_reason

CAST = "org.apache.spark.SparkArithmeticException: [CAST_OVERFLOW_IN_TABLE_INSERT] Fail"


def _spark(stage: int, tid: int) -> str:
    return (
        f"org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage "
        f"{stage}.0 failed 1 times, most recent failure: Lost task 0.0 in stage {stage}.0 "
        f"(TID {tid}) (localhost executor driver): {CAST}"
    )


def test_two_runs_of_one_failure_give_one_reason() -> None:
    aborted = "org.apache.spark.SparkException: Job aborted due to stage failure: a task failed"
    assert stable_reason(_spark(1005, 891)) == stable_reason(_spark(749, 661))
    assert stable_reason(_spark(1005, 891)) == f"{aborted}: {CAST}"
    hashed = "QueryError: java.lang.IllegalArgumentException: java.lang.ClassCastException@{}"
    assert stable_reason(hashed.format("3c7214b8")) == stable_reason(hashed.format("e7ebb5c"))
    assert stable_reason(hashed.format("3c7214b8")).endswith("java.lang.ClassCastException")
    snapshots = "Starting snapshot (exclusive) {0} is not a parent ancestor of end snapshot {0}"
    assert stable_reason(snapshots.format("8281764459326001901")) == snapshots.format("<id>")
    assert stable_reason("Cannot find snapshot with ID 4480472831595249188").endswith("ID <id>")
    # delta-rs prints a Python set, in the order of its strings' hashes (another per process).
    features = "DeltaProtocolError: The table has set these reader features: {} but these ..."
    one = stable_reason(features.format("{'deletionVectors', 'columnMapping'}"))
    assert one == stable_reason(features.format("{'columnMapping', 'deletionVectors'}"))
    assert "{'columnMapping', 'deletionVectors'}" in one


def test_what_belongs_to_the_failure_stays() -> None:
    for text in (
        "java.lang.ClassCastException: class a.B cannot be cast to class c.D",
        "HUDI_BAD_DATA: Column id 3 of file 20261202143005615.parquet",
        "Fail to insert a value of BIGINT into `qty` due to an overflow at 12",
        "reader features: {'typeWidening'} but these are not yet supported",
        "Map(b -> 1, a -> 2) and {2, 1}",
    ):
        assert stable_reason(text) == text


def test_hive_names_each_cause_once_whatever_its_objects_hash() -> None:
    """Hive's causes per file group: four file groups failing with one exception whose
    message is its identity are one cause, in one place."""
    causes = [(f"java.lang.ClassCastException@{h}", True) for h in ("3c72", "61d3", "6383")]
    causes.append(("java.lang.IllegalArgumentException: object is not an instance", True))
    line = causes_line("java.io.IOException", causes)
    assert line == (
        "java.lang.ClassCastException; in other file groups: "
        "java.lang.IllegalArgumentException: object is not an instance"
    )


def test_a_long_reason_is_cut_in_the_same_place_on_every_run() -> None:
    """The run-specific parts go before the reason is cut to its length: else a shorter stage
    number moves the cut, and the tails of two runs' reasons differ."""
    tail = " Use `try_cast` on the input value to tolerate overflow and return NULL instead." * 5
    one, other = (QueryError(_spark(stage, tid) + tail) for stage, tid in ((1005, 891), (7, 6)))
    assert describe_error(one) == describe_error(other)
    assert len(describe_error(one)) == 400 and "a task failed" in describe_error(one)
